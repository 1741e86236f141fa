# Runs the built headroom to write its man pages (gzip -9n, as Debian policy asks) and the
# bash and zsh completions into OUT. Run by the headroom_docs target after every link of
# headroom, so the pages always describe the binary beside them.
# Inputs: HEADROOM (the binary), EMULATOR (empty, or qemu for a cross build), SRC, OUT.
set(ENV{LC_ALL} C)       # English: the pages and scripts are built once, for everyone
set(ENV{LANGUAGE} "")
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(date_args)
else()
  # The last commit's date, so rebuilding the same commit gives the same pages.
  execute_process(COMMAND git -C "${SRC}" log -1 --format=%cs OUTPUT_VARIABLE date
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  set(date_args)
  if(rc EQUAL 0 AND date MATCHES "^[0-9]+-[0-9]+-[0-9]+$")
    set(date_args --date ${date})
  endif()
endif()
file(REMOVE_RECURSE "${OUT}/man1" "${OUT}/man1.tmp")
file(MAKE_DIRECTORY "${OUT}/completions")
foreach(step "help;--man-dir;${OUT}/man1.tmp;${date_args}"
             "help;--completion;bash;-o;${OUT}/completions/headroom"
             "help;--completion;zsh;-o;${OUT}/completions/_headroom")
  execute_process(COMMAND ${EMULATOR} "${HEADROOM}" ${step} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "headroom ${step} failed (${rc}): ${err}")
  endif()
endforeach()
file(MAKE_DIRECTORY "${OUT}/man1")
file(GLOB pages "${OUT}/man1.tmp/*.1")
foreach(page IN LISTS pages)
  get_filename_component(name "${page}" NAME)
  file(COPY "${page}" DESTINATION "${OUT}/man1")
  execute_process(COMMAND gzip -9nf "${OUT}/man1/${name}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${name} failed")
  endif()
endforeach()
file(WRITE "${OUT}/stamp" "")
