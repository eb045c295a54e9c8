module ultrapool.invalid/massive

go 1.19
