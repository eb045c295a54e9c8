module ultrapool.invalid/crossbench

go 1.19
