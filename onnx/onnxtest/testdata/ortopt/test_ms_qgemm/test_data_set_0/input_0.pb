
BaJ2™¿P[Q·L¡GRm\°ý -ì}„"ŒJ%õçÔQ[˜ø‘CF«ròÀ}O`›FYkŠ¹