/* bad.h: a shared element formula (check_inline.sh's planted violation). */
static inline float bad_twice_plus_one(float v) { return v * 2.0f + 1.0f; }
