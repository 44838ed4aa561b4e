/* tracerig's own diagnostic port, for the runtimes of a launched command.
 *
 * A runtime whose environment has DOTNET_DiagnosticPorts=PATH,suspend
 * connects to PATH before it runs any managed code, says who it is (the
 * 34-byte advertise: "ADVR_V1\0", its instance cookie, its PID, 2 reserved
 * bytes) and waits for one command on that connection; once the command
 * is done it connects again, and so on.  "suspend" holds it until a
 * ResumeRuntime comes.  This is how dotnet-trace starts a child: the
 * session starts before the first event, so nothing of the startup is
 * missed, and there is no race with the runtime's socket appearing.
 *
 * Every runtime in the command's process tree inherits the variable, so
 * each one of them connects: the port serves them all. */
#ifndef TR_EVENTPIPE_PORT_H
#define TR_EVENTPIPE_PORT_H

#include <stdint.h>
#include <sys/types.h>

#define EP_ADVERTISE_SIZE 34

struct ep_port {
	char dir[64];   /* a directory of our own (0700) under /tmp */
	char path[108]; /* DIR/port: the socket (sun_path's size) */
	int fd;         /* listening; -1 when closed */
};

/* Creates the directory and the listening socket.  0 or -errno. */
int ep_port_open(struct ep_port *p);
/* Closes the socket and removes the socket file and the directory. */
void ep_port_close(struct ep_port *p);

/* What a runtime said when it connected. */
struct ep_advertise {
	uint8_t cookie[16]; /* the runtime instance's GUID */
	uint64_t pid;       /* as the runtime sees it (its PID namespace) */
};

/* Parses the 34 bytes of an advertise: 0, or -EBADMSG (not "ADVR_V1"). */
int ep_advertise_parse(const uint8_t in[EP_ADVERTISE_SIZE], struct ep_advertise *a);

/* Accepts one connection (non-blocking: -EAGAIN when none waits) and reads
 * its advertise within timeout_ms.  Returns the connection (O_NONBLOCK,
 * O_CLOEXEC) with *host_pid (the peer's PID as our namespace sees it, from
 * SO_PEERCRED) and *a filled, or -EAGAIN, -ETIMEDOUT, -EBADMSG (closed
 * early, or not an advertise), -errno. */
int ep_port_accept(struct ep_port *p, int timeout_ms, pid_t *host_pid, struct ep_advertise *a);

/* The value DOTNET_DiagnosticPorts is given: the port's path with
 * ",suspend" (or ",nosuspend"), after `existing` and a ';' when the
 * environment already lists ports of its own.  0 or -ENAMETOOLONG. */
int ep_port_env_value(const struct ep_port *p, const char *existing, int suspend, char *out,
		      size_t len);

#endif
