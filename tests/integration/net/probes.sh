#!/bin/sh
# Run INSIDE a sandbox of t-egress.sh (the built-in one, or a bundle with the
# host's /usr and /etc): tries every way out that the egress policy must
# allow or refuse, one result file per probe in /workspace/out.  It judges
# nothing: the test reads the files, the upstream's log and the record.
#
#   probes.sh GROUP     GROUP: main (the whole list) or detached (two fetches)
#
# (relay.py and client.py sit next to this script.)
# curl results are "HTTP_CODE CONNECT_CODE EXIT" in NAME.code, the body in
# NAME.body; client.py (tests/egress/client.py) results are one JSON object
# in NAME.json.
o=/workspace/out
mkdir -p "$o"
cl () {
	n=$1
	shift
	python3 /workspace/client.py "$@" >"$o/$n.json" 2>>"$o/errors"
}
cu () {
	n=$1
	shift
	curl -s -o "$o/$n.body" -w '%{http_code} %{http_connect}' --max-time 15 "$@" >"$o/$n.code" 2>>"$o/errors"
	echo " $?" >>"$o/$n.code"
}

if [ "$1" = detached ]; then
	cu d-http http://allowed.test/d-http
	cu d-other http://other.test/d-other
	exit 0
fi

# The allowed name, four ways: CONNECT (curl takes HTTPS_PROXY from the
# environment agentbox sets), an absolute-URI GET (HTTP_PROXY), and the
# transparent capture of a client that ignores both, over HTTP and TLS.
cu connect-ok -k https://allowed.test/a-connect
cu http-ok http://allowed.test/a-http
cu capture-ok --noproxy '*' http://allowed.test/a-capture
cu capture-tls-ok -k --noproxy '*' https://allowed.test/a-capture-tls

# A name that is not listed: by DNS, by CONNECT, by an absolute-URI GET, by
# transparent capture (HTTP and TLS), though its address is known.
cl dns-other dns other.test A
getent hosts other.test >"$o/getent-other"
echo "exit $?" >>"$o/getent-other"
cu connect-other -k https://other.test/a-connect-other
cu http-other http://other.test/a-http-other
cu capture-other --noproxy '*' --resolve other.test:80:203.0.113.11 http://other.test/a-capture-other
cu capture-tls-other -k --noproxy '*' --resolve other.test:443:203.0.113.11 https://other.test/a-capture-tls-other

# Direct connections: raw IP to ports that are not captured, a captured port
# with an IP literal, UDP to another resolver, IPv6.
cl direct-22 connect 203.0.113.11 22
cl direct-8080 connect 203.0.113.11 8080
cu raw-ip --noproxy '*' http://203.0.113.11/a-raw-ip
cl udp-resolver udp 203.0.113.11 53
cl udp-resolver6 udp 2001:db8:e::11 53
cl v6-22 connect 2001:db8:e::11 22
cl v6-80 connect 2001:db8:e::11 80 "GET /a-v6 HTTP/1.1\r\nHost: other.test\r\n\r\n"
cu v6-literal --noproxy '*' -g http://[2001:db8:e::11]/a-v6-literal

# A relay inside the container: a forwarder on a loopback port to the proxy
# (then CONNECT other.test), or straight to other.test's address.
rl () {
	n=$1
	shift
	python3 /workspace/relay.py "$@" >"$o/$n.json" 2>>"$o/errors"
}
rl relay-proxy proxy 3128 other.test:443 allowed.test
rl relay-direct direct 203.0.113.11 443 allowed.test

# Listed names whose pins are private, loopback, metadata, the host itself.
cl dns-private dns private.test A
cl dns-loop dns loop.test A
cl connect-private http 3128 "CONNECT private.test:443 HTTP/1.1\r\n\r\n"
cl connect-loop http 3128 "CONNECT loop.test:443 HTTP/1.1\r\n\r\n"
cl connect-meta http 3128 "CONNECT meta.test:80 HTTP/1.1\r\n\r\n"
cl connect-hostlocal http 3128 "CONNECT hostlocal.test:443 HTTP/1.1\r\n\r\n"

# Host and SNI tricks: through the proxy and through transparent capture.
cl host-mismatch http 3128 "GET http://allowed.test/a-host-mismatch HTTP/1.1\r\nHost: other.test\r\n\r\n"
cl sni-mismatch tunnel 3128 allowed.test:443 other.test
cl capture-sni-mismatch tls 203.0.113.10 443 other.test
cl capture-host-mismatch connect 203.0.113.10 80 "GET /a-capture-host-mismatch HTTP/1.1\r\nHost: other.test\r\n\r\n"
cl capture-sni-elsewhere tls 203.0.113.11 443 allowed.test
exit 0
