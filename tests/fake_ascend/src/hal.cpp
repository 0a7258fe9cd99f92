// libascend_hal.so (fake): the "driver" that libascendcl.so needs (a DT_NEEDED entry, as with the real one), so a
// test can reproduce a missing driver by leaving this file out. Its one function says how many devices there are.
#include <cstdint>
#include <cstdlib>

extern "C" __attribute__((visibility("default"))) int drvGetDevNum(uint32_t* count) {
  if (!count) return 1;
  unsigned long n = 1;
  if (const char* v = std::getenv("FAKE_ASCEND_DEVICES"); v && *v) {
    char* end = nullptr;
    n = std::strtoul(v, &end, 10);
    if (*end || n > 64) return 2;
  }
  *count = static_cast<uint32_t>(n);
  return 0;
}
