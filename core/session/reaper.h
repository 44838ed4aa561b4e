/* The end of a run: freeing and closing handed to a process of its own. */
#ifndef TR_REAPER_H
#define TR_REAPER_H

/* Called once nothing is left to do but free memory and close files
 * (the archive written and in place, the staging unlinked, the output's
 * lock released, stdio flushed).  Makes a reaper: a process that shares
 * this one's memory and holds copies of its descriptors, waits for this
 * one to exit, then runs cleanup(arg) and exits.  0 once the reaper holds
 * everything: the caller _exit()s at once, without freeing.  -1 when no
 * reaper was made (another thread still runs, a sanitizer build, clone
 * failed): the caller frees as always. */
int tr_reaper_handoff(void (*cleanup)(void *), void *arg);

#endif
