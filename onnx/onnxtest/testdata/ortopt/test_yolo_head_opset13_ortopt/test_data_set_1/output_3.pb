B	top_boxesJ ›UªBš[BAÛ·A9VÆAê¡Bk1™Aÿ¼ÇAôyAB+¥AÒQ;AQ~aACRB&ŒAìÒ¿A>ªA
ÇºB¶iÕAª^ÐA¨7´A»§BæT@‡JàA¼¹¥A/¡¹BzÁ,BŽ”A5”AúxªB•A¬øÓA´}ŸAR7tBœJB(¾AK=·Al20B_^NB—|B*ˆuA