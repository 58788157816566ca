(section
  (atx_heading) @role
)
