// fmt's compiled part for headroom-guardian alone: its definitions from Debian's fmt headers
// (format-inl.h), so the worker links fmt statically. Debian's libfmt-dev ships no static
// library, and libfmt.so would load libstdc++.so (about 1.5 MiB resident) into the process
// that is linked with -static-libstdc++ to stay small (docs/guardian.md "Its own memory").
// Without a locale: the 'L' specifier (which no guardian message uses) groups by threes with
// ',' and the decimal point is '.', as the C locale headroom keeps for numbers; std::locale
// and all its facets (about 250 KB of libstdc++) then stay out of the worker.
#define FMT_STATIC_THOUSANDS_SEPARATOR ','
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
// The instantiations the library's objects call (the char ones of fmt's own format.cc).
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, basic_format_args<buffer_context<char>>,
                         locale_ref);
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
