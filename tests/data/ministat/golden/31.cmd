ministat iguana iguana iguana iguana iguana iguana iguana iguana
