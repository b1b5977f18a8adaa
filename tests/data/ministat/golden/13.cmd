ministat -w 0 iguana chameleon
