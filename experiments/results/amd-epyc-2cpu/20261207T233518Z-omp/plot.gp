set terminal pngcairo size 1400,1560 font ',10'
set output "omp.png"
set termoption noenhanced
$sync_libgomp << EOD
-0.2 660.4 592.3 1094.5 "PARALLEL"
0.8 310.1 244.2 540.6 "FOR"
1.8 782.8 644.6 1411.8 "PARALLEL_FOR"
2.8 291.6 250.8 524.7 "BARRIER"
3.8 241.8 220.5 573.3 "SINGLE"
4.8 3.1 0.4 22.7 "CRITICAL"
5.8 3 0.2 34.9 "LOCK_UNLOCK"
6.8 24.6 12.7 30.3 "ATOMIC"
7.8 691.9 586.7 1264.5 "REDUCTION"
EOD
$sync_libomp << EOD
0 610.3 492 1672.6 "PARALLEL"
1 249.6 196.5 662.6 "FOR"
2 595.2 551.6 1912.1 "PARALLEL_FOR"
3 218.6 193.6 660.2 "BARRIER"
4 237.3 182.1 807.5 "SINGLE"
5 109.6 80.6 487.3 "CRITICAL"
6 94 80.4 496.4 "LOCK_UNLOCK"
7 23.5 9.1 36.4 "ATOMIC"
8 615.7 492 1679 "REDUCTION"
EOD
$sync_ultrapool << EOD
0.2 535.1 473.1 734.2 "PARALLEL"
1.2 93.2 72.4 116.2 "FOR"
2.2 565.1 522.1 768.3 "PARALLEL_FOR"
3.2 84 65.1 125.1 "BARRIER"
4.2 74.8 50.4 108 "SINGLE"
5.2 8.1 6.8 21.7 "CRITICAL"
6.2 12.5 6.5 21.5 "LOCK_UNLOCK"
7.2 26.5 23.5 35.3 "ATOMIC"
8.2 504 461.5 771.8 "REDUCTION"
EOD
$sched_libgomp << EOD
-0.2 509 312.2 1334.8 "STATIC"
0.8 804.7 330.3 1397.3 "STATIC_1"
1.8 684.2 402.3 1309.3 "STATIC_2"
2.8 725.6 371 1472.1 "STATIC_4"
3.8 632.9 341.4 1374.5 "STATIC_8"
4.8 553.1 356.9 1282.6 "STATIC_16"
5.8 703.4 336.3 1367.9 "STATIC_32"
6.8 747.9 324.5 1277.8 "STATIC_64"
7.8 553.2 357.8 1277.7 "STATIC_128"
8.8 1654 489.6 8229.3 "DYNAMIC_1"
9.8 914 398.6 7703.1 "DYNAMIC_2"
10.8 652 406.1 4435.7 "DYNAMIC_4"
11.8 653.9 390.8 3017.1 "DYNAMIC_8"
12.8 910.8 326.5 2041.9 "DYNAMIC_16"
13.8 738 452 1685.9 "DYNAMIC_32"
14.8 733.3 378.2 1538.3 "DYNAMIC_64"
15.8 613.7 371.3 1305.9 "DYNAMIC_128"
16.8 505 340.3 1324.9 "GUIDED_1"
17.8 414.5 365.6 1391.2 "GUIDED_2"
18.8 502.5 398.7 1611.5 "GUIDED_4"
19.8 522.8 411.3 1385.2 "GUIDED_8"
20.8 625.5 175.5 1575.9 "GUIDED_16"
21.8 634.3 388.4 1600.4 "GUIDED_32"
22.8 617.2 497.6 1245.6 "GUIDED_64"
23.8 631.5 374.6 1300 "GUIDED_128"
EOD
$sched_libomp << EOD
0 4097.4 3111.7 5586.2 "STATIC"
1 84465.5 75998.1 109609 "STATIC_1"
2 45595.1 36169.6 76178.2 "STATIC_2"
3 22442.9 19216.2 42633.2 "STATIC_4"
4 19821.1 10784.5 23331.1 "STATIC_8"
5 8081 6793.1 13833.7 "STATIC_16"
6 5401.2 4872.1 8785.4 "STATIC_32"
7 4486.4 3865.9 6593.8 "STATIC_64"
8 4048.1 3236.5 5425.2 "STATIC_128"
9 79048.5 71547.6 113147 "DYNAMIC_1"
10 41199.9 37542.5 75789.5 "DYNAMIC_2"
11 22333.7 19477.5 41181 "DYNAMIC_4"
12 12986.7 11098.6 23074.7 "DYNAMIC_8"
13 7821.8 6641 14010.3 "DYNAMIC_16"
14 5521.7 4773.4 9087.6 "DYNAMIC_32"
15 4441.5 3688.7 6674.1 "DYNAMIC_64"
16 3365.8 3155.2 6345.7 "DYNAMIC_128"
17 9502.5 7898.9 14343.8 "GUIDED_1"
18 8013.8 7167.4 12069.9 "GUIDED_2"
19 7734.6 6108.8 10395 "GUIDED_4"
20 6650 5949.2 10540.6 "GUIDED_8"
21 6407.7 5698.7 8096.6 "GUIDED_16"
22 5612.7 4728.5 6431.2 "GUIDED_32"
23 4640.9 4140.2 6271.9 "GUIDED_64"
24 3903.3 3140.1 5251.9 "GUIDED_128"
EOD
$sched_ultrapool << EOD
0.2 528.9 332.9 711.3 "STATIC"
1.2 1040.1 323.2 1624.9 "STATIC_1"
2.2 670.6 285.5 1089.6 "STATIC_2"
3.2 630.2 271.8 1055.4 "STATIC_4"
4.2 592.1 372 750.8 "STATIC_8"
5.2 571.4 402.4 838.2 "STATIC_16"
6.2 510.4 352.2 731.7 "STATIC_32"
7.2 520.9 372.6 740.9 "STATIC_64"
8.2 431.7 279 979 "STATIC_128"
9.2 1091.2 858.3 2459.6 "DYNAMIC_1"
10.2 1078.2 455.6 4915.6 "DYNAMIC_2"
11.2 885.7 411.1 1205.4 "DYNAMIC_4"
12.2 637.9 455.3 907.6 "DYNAMIC_8"
13.2 586.9 365.4 872.4 "DYNAMIC_16"
14.2 502.3 406.7 732.1 "DYNAMIC_32"
15.2 486.6 306.7 617.7 "DYNAMIC_64"
16.2 455.1 319.2 611.2 "DYNAMIC_128"
17.2 524.7 345.1 766.2 "GUIDED_1"
18.2 540.7 322.8 638.8 "GUIDED_2"
19.2 500.4 360.4 867.2 "GUIDED_4"
20.2 529.1 385.4 695.1 "GUIDED_8"
21.2 709.6 596 921.3 "GUIDED_16"
22.2 436.4 282.4 745.1 "GUIDED_32"
23.2 511.5 372.2 669.7 "GUIDED_64"
24.2 389 248.3 587.5 "GUIDED_128"
EOD
$task_libgomp << EOD
-0.2 68.5 22.6 131.4 "PARALLEL_TASK"
0.8 580.5 289 1047.2 "MASTER_TASK"
1.8 629.5 419.4 1803.7 "TASK_WAIT"
2.8 914 707.8 2356 "TASK_BARRIER"
3.8 95.1 58.6 146.5 "NESTED_TASK"
4.8 65.9 65.2 69.1 "TASKLOOP"
5.8 442.6 344.3 940.9 "DEPEND_CHAIN"
EOD
$task_libomp << EOD
0 163.9 143.5 245.2 "PARALLEL_TASK"
1 377.2 238.7 815.8 "MASTER_TASK"
2 163 157.2 526 "TASK_WAIT"
3 1496.8 1373 3173.3 "TASK_BARRIER"
4 307.9 302.2 420.8 "NESTED_TASK"
5 243.3 226 551.2 "TASKLOOP"
6 935.2 886.9 1468.3 "DEPEND_CHAIN"
EOD
$task_ultrapool << EOD
0.2 39.4 37 178.4 "PARALLEL_TASK"
1.2 180 107.1 228.8 "MASTER_TASK"
2.2 102.3 57.9 243.5 "TASK_WAIT"
3.2 205.4 158.5 220.2 "TASK_BARRIER"
4.2 55.9 46.4 97.7 "NESTED_TASK"
5.2 36.7 25.8 58.8 "TASKLOOP"
6.2 144.4 87.9 185 "DEPEND_CHAIN"
EOD
$kernels_libgomp << EOD
-0.2 220.579 186.395 324.069 "fib(27)"
0.8 0.445079 0.386431 7.98163 "nqueens"
1.8 12.6167 12.0867 18.8421 "msort"
2.8 4.32836 0.333181 7.7541 "sparselu"
3.8 2.2969 1.77614 7.84885 "strassen"
4.8 0.996037 0.781287 2.00018 "jacobi"
EOD
$kernels_libomp << EOD
0 264.534 246.953 293.961 "fib(27)"
1 3.13238 0.791867 4.42192 "nqueens"
2 14.1588 13.373 19.2909 "msort"
3 0.964348 0.9223 1.33656 "sparselu"
4 3.14869 1.65871 6.4693 "strassen"
5 2.80981 0.932218 4.32123 "jacobi"
EOD
$kernels_ultrapool << EOD
0.2 20.6675 19.5435 35.2868 "fib(27)"
1.2 0.194603 0.164376 0.350414 "nqueens"
2.2 8.72383 8.47377 11.9107 "msort"
3.2 0.325647 0.271586 0.67053 "sparselu"
4.2 2.22909 1.6256 3.42824 "strassen"
5.2 0.536932 0.434961 0.899677 "jacobi"
EOD
set multiplot layout 4,1 title "points: median of 11 rounds; bars: lowest to highest round" scale 1,0.9538 offset 0,0.0058
set logscale y
set key outside right
set xtics rotate by -45 font ',8'
set grid ytics
set title "syncbench: overhead per construct (ns)"
set xrange [-0.6:8.6]
set xtics ("PARALLEL" 0, "FOR" 1, "PARALLEL_FOR" 2, "BARRIER" 3, "SINGLE" 4, "CRITICAL" 5, "LOCK_UNLOCK" 6, "ATOMIC" 7, "REDUCTION" 8)
set yrange [0.2:*]
plot $sync_libgomp using 1:2:3:4 with yerrorbars pt 7 lc 1 title "libgomp", $sync_libomp using 1:2:3:4 with yerrorbars pt 7 lc 2 title "libomp", $sync_ultrapool using 1:2:3:4 with yerrorbars pt 7 lc 3 title "ultrapool"
set title "schedbench: overhead per loop (ns)"
set xrange [-0.6:24.6]
set xtics ("STATIC" 0, "STATIC_1" 1, "STATIC_2" 2, "STATIC_4" 3, "STATIC_8" 4, "STATIC_16" 5, "STATIC_32" 6, "STATIC_64" 7, "STATIC_128" 8, "DYNAMIC_1" 9, "DYNAMIC_2" 10, "DYNAMIC_4" 11, "DYNAMIC_8" 12, "DYNAMIC_16" 13, "DYNAMIC_32" 14, "DYNAMIC_64" 15, "DYNAMIC_128" 16, "GUIDED_1" 17, "GUIDED_2" 18, "GUIDED_4" 19, "GUIDED_8" 20, "GUIDED_16" 21, "GUIDED_32" 22, "GUIDED_64" 23, "GUIDED_128" 24)
set yrange [87.75:*]
plot $sched_libgomp using 1:2:3:4 with yerrorbars pt 7 lc 1 title "libgomp", $sched_libomp using 1:2:3:4 with yerrorbars pt 7 lc 2 title "libomp", $sched_ultrapool using 1:2:3:4 with yerrorbars pt 7 lc 3 title "ultrapool"
set title "taskbench: overhead per task construct (ns)"
set xrange [-0.6:6.6]
set xtics ("PARALLEL_TASK" 0, "MASTER_TASK" 1, "TASK_WAIT" 2, "TASK_BARRIER" 3, "NESTED_TASK" 4, "TASKLOOP" 5, "DEPEND_CHAIN" 6)
set yrange [11.3:*]
plot $task_libgomp using 1:2:3:4 with yerrorbars pt 7 lc 1 title "libgomp", $task_libomp using 1:2:3:4 with yerrorbars pt 7 lc 2 title "libomp", $task_ultrapool using 1:2:3:4 with yerrorbars pt 7 lc 3 title "ultrapool"
set title "kernels, pragma variant (fib: ns per task; others: ms per run)"
set xrange [-0.6:5.6]
set xtics ("fib(27)" 0, "nqueens" 1, "msort" 2, "sparselu" 3, "strassen" 4, "jacobi" 5)
set yrange [0.082188:*]
set label 99 "machine amd-epyc-2cpu (AMD EPYC, 2 CPUs) | 2026-12-07 23:35 UTC | commit 78f5c97" at screen 0.995,0.0058 right front font ',8' tc rgb '#555555' noenhanced
plot $kernels_libgomp using 1:2:3:4 with yerrorbars pt 7 lc 1 title "libgomp", $kernels_libomp using 1:2:3:4 with yerrorbars pt 7 lc 2 title "libomp", $kernels_ultrapool using 1:2:3:4 with yerrorbars pt 7 lc 3 title "ultrapool"
unset multiplot
