"""The egress proxy of an agent workspace (spec `egress-proxy:`): HTTP CONNECT and plain HTTP requests to the
hosts of the spec's `egress:` list, on its ports, and nothing else.

NetworkPolicies allow addresses, resolved once at start; this proxy allows names and resolves them at each
connection, so an allowed host whose addresses change (CDN-fronted APIs) stays reachable while the workspace
runs. A host that is not allowed gets a 403 at once, naming the host and the spec key to add it to.
Its own NetworkPolicy lets only this pod out to any address (on the allowed ports); the other pods of the
workspace reach the world through it (HTTPS_PROXY, set by so) or, for other protocols, by address.

Set by so: SO_EGRESS_ALLOW (hosts and CIDRs, comma-separated), SO_EGRESS_PORTS, SO_EGRESS_SPEC (the spec
file named in refusals), SO_EGRESS_LISTEN (port, default 3128), SO_EGRESS_READY (the file made once it listens,
default /tmp/so-egress-ready). Standard library only.
"""
import asyncio
import ipaddress
import os
import signal
import sys

ALLOW = [a.strip().lower() for a in os.environ.get("SO_EGRESS_ALLOW", "").split(",") if a.strip()]
PORTS = {int(p) for p in os.environ.get("SO_EGRESS_PORTS", "443,80").split(",") if p.strip().isdigit()}
SPEC = os.environ.get("SO_EGRESS_SPEC", "the workspace's spec.yml")
LISTEN = int(os.environ.get("SO_EGRESS_LISTEN", "3128"))
# Made once the port listens: the readiness probe waits for it with a shell, not an interpreter of its own (the
# container's CPU limit makes every start of python3 slow).
READY = os.environ.get("SO_EGRESS_READY", "/tmp/so-egress-ready")
NETWORKS = []
HOSTS = set()
for a in ALLOW:
    try:
        NETWORKS.append(ipaddress.ip_network(a, strict=False))
    except ValueError:
        HOSTS.add(a.rstrip("."))


def allowed(host, port):
    """Whether host:port is on the list: a host exactly, or an address within a CIDR."""
    if port not in PORTS:
        return False
    h = host.strip("[]").lower().rstrip(".")
    if h in HOSTS:
        return True
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return False
    return any(ip in n for n in NETWORKS)


def refusal(host, port):
    why = f"port {port} is not among the allowed ports ({', '.join(map(str, sorted(PORTS)))})" if host.lower() in HOSTS \
        else f"{host} is not in the egress: list"
    body = (f"so egress proxy: {host}:{port} refused: {why}.\n"
            f"hint: add it to egress: (or the port to egress-ports:) in {SPEC}, then start the workspace again\n").encode()
    return (b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-So-Egress: refused\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)


def split_authority(authority, default_port):
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = authority.rpartition(":") if authority.count(":") == 1 else (authority, "", "")
    return host, int(port) if port.isdigit() else default_port


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def handle(reader, writer):
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    except (asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ", 2)
    except ValueError:
        writer.write(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
        writer.close()
        return
    if method.upper() == "CONNECT":
        host, port = split_authority(target, 443)
        rest = b""
    elif target.lower().startswith("http://"):
        authority, _, path = target[7:].partition("/")
        host, port = split_authority(authority, 80)
        headers = [h for h in lines[1:] if h and not h.lower().startswith(("proxy-connection:", "proxy-authorization:"))]
        rest = (f"{method} /{path} {version}\r\n" + "\r\n".join(headers) + "\r\n\r\n").encode("latin-1")
    else:
        writer.write(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nso egress proxy: send CONNECT or an absolute http:// URL\n")
        writer.close()
        return
    if not allowed(host, port):
        print(f"refused {host}:{port}", flush=True)
        writer.write(refusal(host, port))
        await writer.drain()
        writer.close()
        return
    try:
        # Resolved now, at each connection: the name's current addresses.
        up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), 15)
    except (OSError, asyncio.TimeoutError) as e:
        print(f"failed {host}:{port}: {e}", flush=True)
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n" + f"so egress proxy: {host}:{port}: {e}\n".encode())
        writer.close()
        return
    print(f"allowed {host}:{port}", flush=True)
    if rest:
        up_writer.write(rest)
    else:
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def main():
    server = await asyncio.start_server(handle, host=None, port=LISTEN)
    print(f"so egress proxy on :{LISTEN}: hosts {sorted(HOSTS)}, networks {[str(n) for n in NETWORKS]}, ports {sorted(PORTS)}", flush=True)
    try:
        open(READY, "w").close()
    except OSError as e:
        print(f"so egress proxy: could not mark itself ready at {READY} ({e}); its readiness probe will fail", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    # PID 1 of its container: the kernel delivers no signal it has no handler for, so without this the pod's
    # SIGTERM is ignored and every stop waits out the grace period.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
