BflatJî
>Ô?)fJ?