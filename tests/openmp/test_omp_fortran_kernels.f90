! gfortran -fopenmp kernels on ultrapool, each result checked against a
! known value or the same computation done sequentially:
!   tasks       fib with every call a task; a chain of tasks ordered by
!               depend(in/out); a taskloop with a reduction; a taskgroup
!   loops       parallel do of every schedule (static, static with a chunk,
!               dynamic, guided, runtime), down-counting and 8-byte
!               loops, collapse(2), lastprivate, nowait, a Jacobi sweep
!   reductions  +, *, max, min, .and., .or., ieor, an array reduction and
!               a double precision sum
! Every check that fails stops with its own code.
module fkernels
  use omp_lib
  implicit none
contains
  recursive integer(8) function fib(n) result(r)
    integer, intent(in) :: n
    integer(8) :: x, y
    if (n < 2) then
      r = n
      return
    end if
    !$omp task shared(x) firstprivate(n)
    x = fib(n - 1)
    !$omp end task
    !$omp task shared(y) firstprivate(n)
    y = fib(n - 2)
    !$omp end task
    !$omp taskwait
    r = x + y
  end function fib

  ! One Jacobi sweep of the 5-point stencil over the interior of an n x n
  ! grid, rows shared out by the given schedule.
  subroutine sweep(src, dst, n, par)
    integer, intent(in) :: n
    real(8), intent(in) :: src(n, n)
    real(8), intent(inout) :: dst(n, n)
    logical, intent(in) :: par
    integer :: i, j
    !$omp parallel do schedule(dynamic, 3) private(i) if(par)
    do j = 2, n - 1
      do i = 2, n - 1
        dst(i, j) = 0.25d0 * (src(i - 1, j) + src(i + 1, j) + src(i, j - 1) + src(i, j + 1))
      end do
    end do
    !$omp end parallel do
  end subroutine sweep
end module fkernels

program test_omp_fortran_kernels
  use omp_lib
  use iso_c_binding
  use fkernels
  implicit none
  interface
    integer(c_int) function on_ultrapool() bind(c)
      import :: c_int
    end function
  end interface
  integer, parameter :: n = 10000, g = 48, nchain = 200
  integer :: i, j, k, last, hist(0:6), want_hist(0:6), chain(0:nchain)
  integer :: imax, imin, ix, want_ix
  integer(8) :: s, s8, prod, r, rt
  integer(8) :: lo, hi
  logical :: all_pos, any_big
  real(8) :: dsum, a(g, g), b(g, g), ra(g, g), rb(g, g)
  integer :: rows(n), total

  if (on_ultrapool() /= 1) stop 1
  call omp_set_dynamic(.false.)
  call omp_set_num_threads(3)

  ! ---- tasks -----------------------------------------------------------
  r = 0
  !$omp parallel
  !$omp single
  if (omp_get_num_threads() /= 3) stop 2
  r = fib(20)
  !$omp end single
  !$omp end parallel
  if (r /= 6765) stop 3

  ! A chain: each task reads the previous link and writes its own, so the
  ! tasks run one after another whichever thread takes them.
  chain = -1
  chain(0) = 0
  !$omp parallel
  !$omp single
  do i = 1, nchain
    !$omp task depend(in: chain(i - 1)) depend(out: chain(i)) firstprivate(i)
    chain(i) = chain(i - 1) + i
    !$omp end task
  end do
  !$omp end single
  !$omp end parallel
  if (chain(nchain) /= nchain * (nchain + 1) / 2) stop 4

  s = 0
  !$omp parallel
  !$omp single
  !$omp taskloop grainsize(64) reduction(+: s)
  do i = 1, n
    s = s + i
  end do
  !$omp end taskloop
  !$omp end single
  !$omp end parallel
  if (s /= int(n, 8) * (n + 1) / 2) stop 5

  ! A taskgroup waits for the tasks of its tasks too.
  total = 0
  !$omp parallel
  !$omp single
  !$omp taskgroup
  do i = 1, 8
    !$omp task firstprivate(i)
    !$omp task firstprivate(i)
    !$omp atomic
    total = total + i
    !$omp end task
    !$omp end task
  end do
  !$omp end taskgroup
  if (total /= 36) stop 6
  !$omp end single
  !$omp end parallel

  print '(a)', 'tasks verified'

  ! ---- loops -----------------------------------------------------------
  ! Every schedule: each iteration exactly once.
  do k = 1, 5
    rows = 0
    select case (k)
    case (1)
      !$omp parallel do schedule(static)
      do i = 1, n
        rows(i) = rows(i) + 1
      end do
    case (2)
      !$omp parallel do schedule(static, 7)
      do i = 1, n
        rows(i) = rows(i) + 1
      end do
    case (3)
      !$omp parallel do schedule(dynamic, 5)
      do i = 1, n
        rows(i) = rows(i) + 1
      end do
    case (4)
      !$omp parallel do schedule(guided)
      do i = 1, n
        rows(i) = rows(i) + 1
      end do
    case (5)
      call omp_set_schedule(omp_sched_dynamic, 11)
      !$omp parallel do schedule(runtime)
      do i = 1, n
        rows(i) = rows(i) + 1
      end do
    end select
    if (any(rows /= 1)) then
      print '(a, i0)', 'schedule case ', k
      stop 10
    end if
  end do

  ! Down by 3, dynamic; 8-byte bounds, guided; nowait then a barrier.
  s = 0
  !$omp parallel do schedule(dynamic, 4) reduction(+: s)
  do i = n, 1, -3
    s = s + i
  end do
  want_ix = 0
  do i = n, 1, -3
    want_ix = want_ix + i
  end do
  if (s /= want_ix) stop 16
  s8 = 0
  lo = 5000000000_8
  hi = lo + 9999
  !$omp parallel do schedule(guided, 2) reduction(+: s8)
  do r = lo, hi
    s8 = s8 + (r - lo)
  end do
  if (s8 /= 9999_8 * 10000 / 2) stop 17
  rows = 0
  !$omp parallel
  !$omp do schedule(dynamic)
  do i = 1, n / 2
    rows(i) = 1
  end do
  !$omp end do nowait
  !$omp do schedule(static, 3)
  do i = n / 2 + 1, n
    rows(i) = 2
  end do
  !$omp end do nowait
  !$omp barrier
  !$omp single
  if (count(rows == 1) /= n / 2 .or. count(rows == 2) /= n - n / 2) stop 18
  !$omp end single
  !$omp end parallel

  ! collapse(2) over a triangle-free rectangle, lastprivate.
  s = 0
  !$omp parallel do collapse(2) schedule(dynamic, 13) reduction(+: s)
  do j = 1, 60
    do i = 1, 70
      s = s + i * 1000 + j
    end do
  end do
  if (s /= 60_8 * (70 * 71 / 2) * 1000 + 70_8 * (60 * 61 / 2)) stop 19
  last = -1
  !$omp parallel do lastprivate(last) schedule(guided)
  do i = 1, n
    last = i
  end do
  if (last /= n) stop 20

  ! Jacobi: parallel sweeps equal sequential ones bit for bit (each point
  ! is one expression either way).
  do j = 1, g
    do i = 1, g
      a(i, j) = mod(i * 7 + j * 13, 17) * 0.5d0
    end do
  end do
  b = a
  ra = a
  rb = a
  do k = 1, 20
    call sweep(a, b, g, .true.)
    call sweep(b, a, g, .true.)
    call sweep(ra, rb, g, .false.)
    call sweep(rb, ra, g, .false.)
  end do
  if (maxval(abs(a - ra)) > 0d0) stop 21

  print '(a)', 'loops verified'

  ! ---- reductions ------------------------------------------------------
  s = 0
  prod = 1
  imax = -huge(imax)
  imin = huge(imin)
  all_pos = .true.
  any_big = .false.
  ix = 0
  hist = 0
  dsum = 0
  !$omp parallel do schedule(dynamic, 16) reduction(+: s, hist, dsum) reduction(*: prod) &
  !$omp& reduction(max: imax) reduction(min: imin) reduction(.and.: all_pos) &
  !$omp& reduction(.or.: any_big) reduction(ieor: ix)
  do i = 1, n
    s = s + i
    if (mod(i, 1000) == 0) prod = prod * 2
    imax = max(imax, mod(i * 37, 9973))
    imin = min(imin, mod(i * 37, 9973) + 5)
    all_pos = all_pos .and. i > 0
    any_big = any_big .or. i == n
    ix = ieor(ix, i)
    hist(mod(i, 7)) = hist(mod(i, 7)) + 1
    dsum = dsum + 1.0d0 / i
  end do
  want_ix = 0
  want_hist = 0
  do i = 1, n
    want_ix = ieor(want_ix, i)
    want_hist(mod(i, 7)) = want_hist(mod(i, 7)) + 1
  end do
  if (s /= int(n, 8) * (n + 1) / 2) stop 30
  if (prod /= 1024) stop 31
  if (imax /= 9972 .or. imin /= 5) stop 32
  if (.not. all_pos .or. .not. any_big) stop 33
  if (ix /= want_ix) stop 34
  if (any(hist /= want_hist)) stop 35
  if (abs(dsum - 9.787606036044382d0) > 1d-9) stop 36

  ! A reduction over the region itself, with an orphaned loop inside.
  rt = 0
  !$omp parallel reduction(+: rt)
  !$omp do schedule(static, 1)
  do i = 1, 99
    rt = rt + i
  end do
  !$omp end do
  !$omp end parallel
  if (rt /= 4950) stop 37

  print '(a)', 'test_omp_fortran_kernels: tasks, loops and reductions verified on ultrapool'
end program test_omp_fortran_kernels
