// loopback.cjs: a Node preload (node --require ./loopback.cjs ...) that makes every
// TCP listen bind 127.0.0.1, whatever host (or none) the program asked for.
// Needed for supergateway, which listens on all interfaces and has no host flag;
// postern's rule is that test services listen on 127.0.0.1 only.
// Unix sockets, named pipes and inherited handles/fds are left alone.
"use strict";
const net = require("net");

const LOOPBACK = "127.0.0.1";
const listen = net.Server.prototype.listen;

function isPipeName(v) {
  return typeof v === "string" && !/^\d+$/.test(v);
}

net.Server.prototype.listen = function (...args) {
  const cb = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
  let options;
  const first = args[0];
  if (first !== null && typeof first === "object") {
    // listen(options) or listen(handle)
    if (first.path !== undefined || first.fd !== undefined || first._handle !== undefined || first.handle !== undefined) {
      return listen.apply(this, cb ? [...args, cb] : args);
    }
    options = { ...first, host: LOOPBACK };
    delete options.ipv6Only;
  } else if (isPipeName(first)) {
    // listen(path[, backlog]): a unix socket or a named pipe
    return listen.apply(this, cb ? [...args, cb] : args);
  } else {
    // listen([port[, host[, backlog]]])
    options = { port: first === undefined || first === null ? 0 : Number(first), host: LOOPBACK };
    const backlog = typeof args[1] === "number" ? args[1] : args[2];
    if (typeof backlog === "number") options.backlog = backlog;
  }
  return cb ? listen.call(this, options, cb) : listen.call(this, options);
};
