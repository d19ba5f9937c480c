
BlogitsJ(ฃtฏ=zjy>p	>ไฝฉพv๋+=หล>s8U>iJ;=ิ้ว=