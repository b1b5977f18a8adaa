ministat weird
