BboxesJðPÆÀA‰Ú
B`ÞÚAýv3B²A>@
@Ôa@A¡·AA ÏŠ?¤øB`V•@wcBBªm?(¬cA~T†@ÂAXìèAgÝ@o=Bø\²Aý™AkòAÏEÇA\$B€[€ApQî>Ót§AR'=Añ A€¬œA<õÊA?ðBjê@‘T!BrK@A…ìKB¨¨AAo“A4ÈA ßB¹KGAR>"BäÓƒA&LB‚J†A$‹À@D®Aû­A÷žA°‡ÊAjìÃAœBÍƒšAþKB˜-ÇA¾x)B`nA¥‚ZAºsJAX­îA