ministat -An iguana chameleon
