ministat iguana chameleon
