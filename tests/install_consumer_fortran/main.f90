! Compresses and decompresses a small field through the installed module: within the bound.
program app
  use hpcz
  use iso_fortran_env, only: int8, real32
  implicit none
  real(real32) :: a(40, 30), b(40, 30)
  integer(int8), allocatable :: archive(:)
  integer :: status, i, j
  do j = 1, 30
    do i = 1, 40
      a(i, j) = 280.0 + 10.0 * sin(0.1 * i) * cos(0.07 * j)
    end do
  end do
  call hpcz_compress(a, archive, status, abs=1d-2)
  if (status /= HPCZ_OK) error stop "hpcz_compress failed"
  call hpcz_decompress(archive, b, status)
  if (status /= HPCZ_OK) error stop "hpcz_decompress failed"
  if (maxval(abs(a - b)) > 1e-2) error stop "outside the bound"
  print '(a,i0,a)', "fortran consumer: ", size(archive), " bytes, within abs 1e-2"
end program app
