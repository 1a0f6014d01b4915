/* A stand-in for Windows' bcryptprimitives.dll, for running Windows builds under Wine 8.0
 * (Debian 12's), which lacks it: Rust's standard library (1.78 and later) takes its random
 * bytes from bcryptprimitives.dll's ProcessPrng, so no Rust program starts without it. Wine
 * 8.0 has RtlGenRandom (advapi32's SystemFunction036), which fills a buffer from the system's
 * random source just the same. tests/cli/windows.rs builds this with mingw-w64 into the test's own
 * Wine prefix; nothing of it is shipped.
 *
 *   x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c -ladvapi32
 */
#include <windows.h>

#define RtlGenRandom SystemFunction036
BOOLEAN NTAPI RtlGenRandom(PVOID buffer, ULONG length);

/* ProcessPrng never fails on Windows: it returns TRUE or ends the process. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!RtlGenRandom(data, chunk)) {
            ExitProcess(1);
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
