ministat bad
