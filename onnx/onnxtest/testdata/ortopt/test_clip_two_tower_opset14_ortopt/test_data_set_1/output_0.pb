Blogits_per_imageJEä½ºN
¾