/* Fortran wrappers (fortran.c): to come. */
