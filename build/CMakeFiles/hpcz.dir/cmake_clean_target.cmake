file(REMOVE_RECURSE
  "libhpcz.a"
)
