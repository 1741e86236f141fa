# Runs the built headroom to write its man pages (gzip -9n, as Debian policy asks) and the
# bash and zsh completions into OUT. Run by the headroom_docs target after every link of
# headroom, so the pages always describe the binary beside them.
# Inputs: HEADROOM (the binary), EMULATOR (empty, or qemu for a cross build), SRC, OUT, and
# LANGS (comma-separated languages with a built catalog: their pages go to OUT/LANG/man1).
set(ENV{LC_ALL} C)       # English: the completions and OUT/man1 are for everyone
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

# headroom help --man-dir into DIR.tmp, then each page gzipped into DIR.
function(write_pages dir)
  file(REMOVE_RECURSE "${dir}" "${dir}.tmp")
  execute_process(COMMAND ${EMULATOR} "${HEADROOM}" help --man-dir "${dir}.tmp" ${date_args}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "headroom help --man-dir ${dir}.tmp failed (${rc}): ${err}")
  endif()
  file(MAKE_DIRECTORY "${dir}")
  file(GLOB pages "${dir}.tmp/*.1")
  foreach(page IN LISTS pages)
    get_filename_component(name "${page}" NAME)
    file(COPY "${page}" DESTINATION "${dir}")
    execute_process(COMMAND gzip -9nf "${dir}/${name}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "gzip ${name} failed")
    endif()
  endforeach()
endfunction()

write_pages("${OUT}/man1")
file(MAKE_DIRECTORY "${OUT}/completions")
foreach(step "help;--completion;bash;-o;${OUT}/completions/headroom"
             "help;--completion;zsh;-o;${OUT}/completions/_headroom")
  execute_process(COMMAND ${EMULATOR} "${HEADROOM}" ${step} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "headroom ${step} failed (${rc}): ${err}")
  endif()
endforeach()

# Each language: LANGUAGE picks the catalog beside the binary; C.UTF-8 (in every glibc since
# 2.35, and Debian's before) lets gettext use it without that language's locale installed.
string(REPLACE "," ";" langs "${LANGS}")
foreach(lang IN LISTS langs)
  set(ENV{LC_ALL} C.UTF-8)
  set(ENV{LANGUAGE} ${lang})
  write_pages("${OUT}/${lang}/man1")
  # Pages that came out English would install English under LANG: a catalog not found.
  file(READ "${OUT}/man1.tmp/headroom.1" english)
  file(READ "${OUT}/${lang}/man1.tmp/headroom.1" translated)
  if(english STREQUAL translated)
    message(FATAL_ERROR "the ${lang} man pages came out in English: headroom found no ${lang} catalog")
  endif()
endforeach()
file(WRITE "${OUT}/stamp" "")
