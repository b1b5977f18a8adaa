ministat iguana -n chameleon
