! hpcz for Fortran: compress and decompress real(4) / real(8) arrays of rank 1 to 4 through the C API
! (include/hpcz/hpcz.h), with iso_c_binding.
!
!   use hpcz
!   integer(int8), allocatable :: archive(:)
!   call hpcz_compress(a, archive, status, rel=1d-3)              ! or abs=..., mode="ratio", fill=...
!   call hpcz_decompress(archive, b, status)                      ! b of a's shape and kind
!   if (status /= HPCZ_OK) print *, hpcz_error_message()
!
! Arrays are Fortran's: a(nx, ny, nz) is stored as hpcz's dims nz x ny x nx (slowest to fastest), so an
! archive of a Fortran array is the archive `hpcz compress -d NZxNYxNX` writes of the same bytes, and
! numpy reads it back as an (nz, ny, nx) array. hpcz_shape gives an archive's array shape in Fortran's
! order, to allocate the array it decodes into. Every call sets status to HPCZ_OK or an hpcz error code
! (the C API's), and hpcz_error_message() says why.
module hpcz
  use iso_c_binding, only: c_char, c_double, c_float, c_int, c_int8_t, c_int64_t, c_loc, c_null_char, c_ptr, &
                           c_size_t, c_associated, c_f_pointer
  implicit none
  private

  integer, parameter, public :: HPCZ_OK = 0, HPCZ_INVALID_ARGUMENT = 1, HPCZ_CORRUPT_ARCHIVE = 2, &
                                HPCZ_UNSUPPORTED = 3, HPCZ_BACKEND_UNAVAILABLE = 4, HPCZ_CUDA_ERROR = 5, &
                                HPCZ_OUT_OF_SPACE = 6, HPCZ_INTERNAL = 7
  integer, parameter, public :: HPCZ_AUTO = 0, HPCZ_CPU = 1, HPCZ_GPU = 2
  integer, parameter, public :: HPCZ_F32 = 1, HPCZ_F64 = 2

  public :: hpcz_compress, hpcz_decompress, hpcz_shape, hpcz_error_message

  interface hpcz_compress
    module procedure compress_f32, compress_f64
  end interface
  interface hpcz_decompress
    module procedure decompress_f32, decompress_f64
  end interface

  ! include/hpcz/hpcz.h's hpcz_options, field for field.
  type, bind(c) :: options_t
    integer(c_int) :: mode = 0
    real(c_double) :: bound = 0
    integer(c_int) :: has_fill = 0
    real(c_double) :: fill = 0
    integer(c_int) :: backend = 0
    integer(c_int) :: codec = 0
    integer(c_int) :: radius = 0
    integer(c_int) :: second_stage = 0
  end type

  interface
    function c_compress(data, dtype, dims, ndims, opt, out, capacity, out_size) bind(c, name="hpcz_compress")
      import :: c_ptr, c_int, c_int64_t, c_size_t, options_t
      type(c_ptr), value :: data, out
      integer(c_int), value :: dtype, ndims
      integer(c_int64_t), intent(in) :: dims(*)
      type(options_t), intent(in) :: opt
      integer(c_size_t), value :: capacity
      integer(c_size_t), intent(out) :: out_size
      integer(c_int) :: c_compress
    end function
    function c_max_compressed_size(n, dtype) bind(c, name="hpcz_max_compressed_size")
      import :: c_int64_t, c_int, c_size_t
      integer(c_int64_t), value :: n
      integer(c_int), value :: dtype
      integer(c_size_t) :: c_max_compressed_size
    end function
    function c_inspect(archive, size, dtype, ndims, dims, n_values) bind(c, name="hpcz_inspect")
      import :: c_ptr, c_size_t, c_int, c_int64_t
      type(c_ptr), value :: archive
      integer(c_size_t), value :: size
      integer(c_int), intent(out) :: dtype, ndims
      integer(c_int64_t), intent(out) :: dims(4), n_values
      integer(c_int) :: c_inspect
    end function
    function c_decompress(archive, size, out, capacity, backend) bind(c, name="hpcz_decompress")
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: archive, out
      integer(c_size_t), value :: size, capacity
      integer(c_int), value :: backend
      integer(c_int) :: c_decompress
    end function
    function c_parse_codec(name) bind(c, name="hpcz_parse_codec")
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: c_parse_codec
    end function
    function c_last_error() bind(c, name="hpcz_last_error")
      import :: c_ptr
      type(c_ptr) :: c_last_error
    end function
    function c_strlen(s) bind(c, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
  end interface

  ! A refusal of this module's own (before the C API is called); empty where the C API's message holds.
  character(len=:), allocatable, save :: own_message

contains

  ! Why the last call of this module failed.
  function hpcz_error_message() result(message)
    character(len=:), allocatable :: message
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: p
    integer :: i, n
    if (allocated(own_message)) then
      message = own_message
      return
    end if
    p = c_last_error()
    if (.not. c_associated(p)) then
      message = ""
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: message)
    do i = 1, n
      message(i:i) = chars(i)
    end do
  end function

  subroutine refuse(status, message)
    integer, intent(out) :: status
    character(*), intent(in) :: message
    own_message = message
    status = HPCZ_INVALID_ARGUMENT
  end subroutine

  ! The C options from the keywords: exactly one of abs and rel; mode "fast" (default), "ratio" or
  ! "interp" (the library's names, hpcz_parse_codec).
  subroutine options_of(opt, status, abs, rel, mode, fill, backend)
    type(options_t), intent(out) :: opt
    integer, intent(out) :: status
    real(c_double), intent(in), optional :: abs, rel, fill
    character(*), intent(in), optional :: mode
    integer, intent(in), optional :: backend
    status = HPCZ_OK
    if (present(abs) .eqv. present(rel)) then
      call refuse(status, "hpcz_compress: give exactly one of abs= and rel=")
      return
    end if
    if (present(abs)) then
      opt%mode = 1
      opt%bound = abs
    else
      opt%mode = 2
      opt%bound = rel
    end if
    if (present(mode)) then
      opt%codec = c_parse_codec(trim(mode) // c_null_char)
      if (opt%codec == 0) then
        call refuse(status, "hpcz_compress: mode must be fast, ratio or interp, not " // trim(mode))
        return
      end if
    end if
    if (present(fill)) then
      opt%has_fill = 1
      opt%fill = fill
    end if
    if (present(backend)) opt%backend = backend
  end subroutine

  ! hpcz's dims (slowest to fastest) of a Fortran array's shape: the shape reversed.
  subroutine dims_of(shp, dims, status)
    integer, intent(in) :: shp(:)
    integer(c_int64_t), intent(out) :: dims(4)
    integer, intent(out) :: status
    integer :: k, r
    status = HPCZ_OK
    dims = 0
    r = size(shp)
    if (r < 1 .or. r > 4) then
      call refuse(status, "hpcz: arrays of rank 1 to 4 only")
      return
    end if
    do k = 1, r
      dims(k) = shp(r - k + 1)
    end do
  end subroutine

  subroutine compress_any(data, dtype, shp, archive, status, abs, rel, mode, fill, backend)
    type(c_ptr), intent(in) :: data
    integer, intent(in) :: dtype, shp(:)
    integer(c_int8_t), allocatable, target, intent(out) :: archive(:)
    integer, intent(out) :: status
    real(c_double), intent(in), optional :: abs, rel, fill
    character(*), intent(in), optional :: mode
    integer, intent(in), optional :: backend
    type(options_t) :: opt
    integer(c_int64_t) :: dims(4)
    integer(c_size_t) :: capacity, got
    integer(c_int8_t), allocatable :: fitted(:)
    if (allocated(own_message)) deallocate (own_message)
    call options_of(opt, status, abs, rel, mode, fill, backend)
    if (status /= HPCZ_OK) return
    call dims_of(shp, dims, status)
    if (status /= HPCZ_OK) return
    capacity = c_max_compressed_size(product(int(shp, c_int64_t)), int(dtype, c_int))
    allocate (archive(max(capacity, 1_c_size_t)))
    status = c_compress(data, int(dtype, c_int), dims, int(size(shp), c_int), opt, c_loc(archive), capacity, got)
    if (status /= HPCZ_OK) then
      deallocate (archive)
      return
    end if
    allocate (fitted(got))
    fitted(:) = archive(1:got)
    call move_alloc(fitted, archive)
  end subroutine

  subroutine compress_f32(values, archive, status, abs, rel, mode, fill, backend)
    real(c_float), intent(in), target, contiguous :: values(..)
    integer(c_int8_t), allocatable, intent(out) :: archive(:)
    integer, intent(out) :: status
    real(c_double), intent(in), optional :: abs, rel, fill
    character(*), intent(in), optional :: mode
    integer, intent(in), optional :: backend
    call compress_any(c_loc(values), HPCZ_F32, shape(values), archive, status, abs, rel, mode, fill, backend)
  end subroutine

  subroutine compress_f64(values, archive, status, abs, rel, mode, fill, backend)
    real(c_double), intent(in), target, contiguous :: values(..)
    integer(c_int8_t), allocatable, intent(out) :: archive(:)
    integer, intent(out) :: status
    real(c_double), intent(in), optional :: abs, rel, fill
    character(*), intent(in), optional :: mode
    integer, intent(in), optional :: backend
    call compress_any(c_loc(values), HPCZ_F64, shape(values), archive, status, abs, rel, mode, fill, backend)
  end subroutine

  ! An archive's array: its dtype (HPCZ_F32 or HPCZ_F64), rank and shape in Fortran's order (shp(1:rank)).
  subroutine hpcz_shape(archive, dtype, rank, shp, status)
    integer(c_int8_t), intent(in), target, contiguous :: archive(:)
    integer, intent(out) :: dtype, rank, shp(4)
    integer, intent(out) :: status
    integer(c_int) :: t, nd
    integer(c_int64_t) :: dims(4), n
    integer :: k
    if (allocated(own_message)) deallocate (own_message)
    dtype = 0
    rank = 0
    shp = 0
    status = c_inspect(c_loc(archive), int(size(archive), c_size_t), t, nd, dims, n)
    if (status /= HPCZ_OK) return
    if (any(dims(1:nd) > huge(0))) then
      call refuse(status, "hpcz_shape: a dimension above the default integer's range")
      return
    end if
    dtype = t
    rank = nd
    do k = 1, nd
      shp(k) = int(dims(nd - k + 1))
    end do
  end subroutine

  subroutine decompress_any(archive, dtype, shp, out, bytes, status, backend)
    integer(c_int8_t), intent(in), target, contiguous :: archive(:)
    integer, intent(in) :: dtype, shp(:)
    type(c_ptr), intent(in) :: out
    integer(c_size_t), intent(in) :: bytes
    integer, intent(out) :: status
    integer, intent(in), optional :: backend
    integer :: t, r, s(4)
    integer(c_int) :: b
    character(len=160) :: why
    call hpcz_shape(archive, t, r, s, status)
    if (status /= HPCZ_OK) return
    if (t /= dtype .or. r /= size(shp)) then
      write (why, '(a,i0,a,i0,a,i0,a,i0)') "hpcz_decompress: the archive holds an array of dtype ", t, &
          " and rank ", r, "; the output is of dtype ", dtype, " and rank ", size(shp)
      call refuse(status, trim(why))
      return
    end if
    if (any(s(1:r) /= shp)) then
      call refuse(status, "hpcz_decompress: the output's shape is not the archive's (hpcz_shape gives it)")
      return
    end if
    b = HPCZ_AUTO
    if (present(backend)) b = backend
    status = c_decompress(c_loc(archive), int(size(archive), c_size_t), out, bytes, b)
  end subroutine

  subroutine decompress_f32(archive, values, status, backend)
    integer(c_int8_t), intent(in), target, contiguous :: archive(:)
    real(c_float), intent(inout), target, contiguous :: values(..)
    integer, intent(out) :: status
    integer, intent(in), optional :: backend
    call decompress_any(archive, HPCZ_F32, shape(values), c_loc(values), int(4 * size(values, kind=c_size_t), c_size_t), &
                        status, backend)
  end subroutine

  subroutine decompress_f64(archive, values, status, backend)
    integer(c_int8_t), intent(in), target, contiguous :: archive(:)
    real(c_double), intent(inout), target, contiguous :: values(..)
    integer, intent(out) :: status
    integer, intent(in), optional :: backend
    call decompress_any(archive, HPCZ_F64, shape(values), c_loc(values), int(8 * size(values, kind=c_size_t), c_size_t), &
                        status, backend)
  end subroutine

end module hpcz
