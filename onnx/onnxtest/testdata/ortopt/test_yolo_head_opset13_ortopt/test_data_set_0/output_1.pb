B
top_scoresJJdÒ>ŒÑ>ŸƒÎ>4•Æ>JüÄ>