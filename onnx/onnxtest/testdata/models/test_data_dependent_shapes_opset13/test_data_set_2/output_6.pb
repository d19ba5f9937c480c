BexpandedJî
>Ô?)fJ?