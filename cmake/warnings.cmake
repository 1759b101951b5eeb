# Compile options (warnings, -fno-math-errno so math loops vectorize) for every zerotrain target,
# and the optional sanitizers.
set(ZT_CXX_OPTIONS -fno-math-errno -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-unused-parameter)
if(ZT_WERROR)
  list(APPEND ZT_CXX_OPTIONS -Werror)
endif()

function(zt_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${ZT_CXX_OPTIONS}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter --expt-relaxed-constexpr -lineinfo>)
endfunction()

if(ZT_SANITIZE)
  string(REPLACE "," ";" _zt_sans "${ZT_SANITIZE}")
  foreach(_s IN LISTS _zt_sans)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${_s}>)
    add_link_options(-fsanitize=${_s})
  endforeach()
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer> $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>)
endif()
