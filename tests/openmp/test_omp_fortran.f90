! gfortran -fopenmp with omp_lib on ultrapool: queries, settings, locks of
! both kinds, the schedule, affinity strings, and a reduction in a region.
program test_omp_fortran
  use omp_lib
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function on_ultrapool() bind(c)
      import :: c_int
    end function
  end interface
  integer(omp_lock_kind) :: lck
  integer(omp_nest_lock_kind) :: nlck
  integer(omp_sched_kind) :: kind
  integer :: chunk, i, total, n, depth
  character(len=64) :: text
  integer(8) :: sum

  if (on_ultrapool() /= 1) stop 1
  if (omp_get_num_threads() /= 1 .or. omp_in_parallel()) stop 2
  call omp_set_dynamic(.false.)
  if (omp_get_dynamic()) stop 3
  call omp_set_num_threads(3)
  if (omp_get_max_threads() /= 3) stop 4
  call omp_set_schedule(omp_sched_guided, 6)
  call omp_get_schedule(kind, chunk)
  if (kind /= omp_sched_guided .or. chunk /= 6) stop 5
  call omp_set_max_active_levels(2)
  if (omp_get_max_active_levels() /= 2) stop 6
  if (omp_get_level() /= 0 .or. omp_get_team_size(0) /= 1) stop 7
  if (omp_get_num_devices() /= 0 .or. .not. omp_is_initial_device()) stop 8

  ! A reduction and team queries in a region.
  sum = 0
  n = 0
  !$omp parallel reduction(+:sum,n)
  n = n + 1
  if (omp_get_num_threads() /= 3 .or. omp_get_level() /= 1) stop 9
  if (omp_get_ancestor_thread_num(1) /= omp_get_thread_num()) stop 10
  ! (worksharing loops are another part's: split by hand)
  do i = 1 + omp_get_thread_num(), 10000, omp_get_num_threads()
    sum = sum + i
  end do
  !$omp end parallel
  if (sum /= 50005000_8 .or. n /= 3) stop 11

  ! Locks: a counter under the simple one, depths of the nestable one.
  call omp_init_lock(lck)
  call omp_init_nest_lock(nlck)
  total = 0
  !$omp parallel private(i, depth)
  do i = 1, 2000
    call omp_set_lock(lck)
    total = total + 1
    call omp_unset_lock(lck)
    call omp_set_nest_lock(nlck)
    depth = omp_test_nest_lock(nlck)
    if (depth /= 2) stop 12
    call omp_unset_nest_lock(nlck)
    call omp_unset_nest_lock(nlck)
  end do
  !$omp end parallel
  if (total /= 6000) stop 13
  if (.not. omp_test_lock(lck)) stop 14
  call omp_unset_lock(lck)
  call omp_destroy_lock(lck)
  call omp_destroy_nest_lock(nlck)

  ! Strings: a hidden length, blank padding.
  call omp_set_affinity_format("lvl %L n %n")
  n = omp_get_affinity_format(text)
  if (n /= 11 .or. text /= "lvl %L n %n") stop 15
  n = omp_capture_affinity(text, "%0.3L|%n")
  if (n /= 5 .or. text /= "000|0") stop 16
  print *, "ok"
end program
