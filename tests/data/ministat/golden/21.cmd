ministat empty
