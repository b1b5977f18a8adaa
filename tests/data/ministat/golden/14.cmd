ministat -w 2 -s iguana chameleon
