ministat even
