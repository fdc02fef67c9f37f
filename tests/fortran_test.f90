! The Fortran module on the bundled field: an f32 rank-3 array with rel (its archive written out for
! fortran_test.sh to compare with the CLI's), an f64 rank-1 array with abs in the ratio mode, and the
! refusals (the wrong shape or kind, both bounds, an unknown mode, a damaged archive).
! usage: fortran_test FIELD.bin ARCHIVE_OUT   (FIELD: data/climate-ncar_csm_b003_ts_100x64x128_f32.bin)
program fortran_test
  use hpcz
  use iso_fortran_env, only: int8, real32, real64, error_unit
  implicit none
  character(len=4096) :: path, out_path
  real(real32), allocatable :: a(:, :, :), b(:, :, :)
  real(real64), allocatable :: x(:), y(:)
  integer(int8), allocatable :: arc(:), arc64(:), bad(:)
  integer :: status, u, t, r, shp(4), i
  real(real64) :: eb

  call get_command_argument(1, path)
  call get_command_argument(2, out_path)
  allocate (a(128, 64, 100), b(128, 64, 100))  ! the C-order 100 x 64 x 128 field, in Fortran's order
  open (newunit=u, file=trim(path), access="stream", form="unformatted", status="old", action="read")
  read (u) a
  close (u)

  call hpcz_compress(a, arc, status, rel=1d-3)
  call check(status == HPCZ_OK, "compress f32: " // hpcz_error_message())
  open (newunit=u, file=trim(out_path), access="stream", form="unformatted", status="replace", action="write")
  write (u) arc
  close (u)
  call hpcz_shape(arc, t, r, shp, status)
  call check(status == HPCZ_OK .and. t == HPCZ_F32 .and. r == 3 .and. all(shp(1:3) == [128, 64, 100]), &
             "hpcz_shape gives the Fortran shape")
  call hpcz_decompress(arc, b, status)
  call check(status == HPCZ_OK, "decompress f32: " // hpcz_error_message())
  eb = 1d-3 * (maxval(real(a, real64)) - minval(real(a, real64)))
  call check(maxval(abs(real(a, real64) - real(b, real64))) <= eb, "f32 within rel 1e-3 of the range")
  call check(size(arc) < 4 * size(a), "the f32 archive is smaller than the array")

  allocate (x(100000), y(100000))
  x = [(100d0 * sin(1d-3 * i) + 1d-2 * cos(0.37d0 * i), i = 1, size(x))]
  call hpcz_compress(x, arc64, status, abs=1d-4, mode="ratio")
  call check(status == HPCZ_OK, "compress f64: " // hpcz_error_message())
  call hpcz_decompress(arc64, y, status)
  call check(status == HPCZ_OK, "decompress f64: " // hpcz_error_message())
  call check(maxval(abs(x - y)) <= 1d-4, "f64 within abs 1e-4")

  call hpcz_decompress(arc64, y(1:10), status)
  call check(status == HPCZ_INVALID_ARGUMENT .and. len(hpcz_error_message()) > 0, "an output of another shape is refused")
  call hpcz_decompress(arc64, b, status)
  call check(status == HPCZ_INVALID_ARGUMENT, "an output of another kind and rank is refused")
  call hpcz_compress(x, bad, status, abs=1d-3, rel=1d-3)
  call check(status == HPCZ_INVALID_ARGUMENT .and. index(hpcz_error_message(), "abs") > 0, "both bounds are refused")
  call hpcz_compress(x, bad, status, rel=1d-3, mode="nope")
  call check(status == HPCZ_INVALID_ARGUMENT .and. index(hpcz_error_message(), "nope") > 0, "an unknown mode is refused")
  bad = arc64
  bad(size(bad) - 2) = not(bad(size(bad) - 2))
  call hpcz_decompress(bad, y, status)
  call check(status == HPCZ_CORRUPT_ARCHIVE, "a damaged archive is reported: " // hpcz_error_message())
  print '(a)', "fortran_test: ok"

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      write (error_unit, '(2a)') "fortran_test: FAILED: ", what
      error stop 1
    end if
  end subroutine

end program fortran_test
