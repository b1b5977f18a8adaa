ministat -c 99.5 iguana chameleon even three
