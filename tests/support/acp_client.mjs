// A real ACP client for pi-tui's tests: the official TypeScript SDK (@agentclientprotocol/sdk)
// drives an agent over stdio, and a Python test drives this script.
//
// Why a bridge: pi-tui's `acp` agent must work with clients others wrote, so its tests talk to
// it through the SDK editors use, not through a client we imagined. Python cannot call the
// TypeScript SDK, so this script stands between the two:
//
//   python test --(JSON lines on our stdin: commands)--> this script --(ACP)--> agent
//   python test <--(JSON lines on our stdout: reports)-- this script <--(ACP)-- agent
//
// SDK 2.4.0 removed the ClientSideConnection class and its named methods (initialize(),
// newSession(), prompt(), extMethod() ...): its client is the app built with acp.client(),
// connected to an ndJsonStream, and agent methods are called with ClientContext.request(name,
// params), typed by the ACP method name. The SDK parses (zod) what the agent sends before a
// handler here runs, and answers a request it cannot parse with -32602 itself.
//
// Usage: node acp_client.mjs --prefix <npm prefix holding the SDK, zod and ajv>
//                            [--schema stable|unstable] -- <agent argv...>
//
// Commands (one JSON object per line):
//   {"op":"request","id":ID,"method":M,"params":P}  an agent method (initialize, session/new,
//        session/prompt, ..., or an extension method starting with "_"), sent with the SDK's
//        ClientContext.request, which in SDK 2.x is the typed call for ACP method names;
//        answered by {"kind":"response","id":ID,"result":R} or
//        {"kind":"error","id":ID,"error":{"code":C,"message":S,"data":D}} (code null when the
//        SDK failed without a JSON-RPC error, e.g. the connection closed)
//   {"op":"notify","method":M,"params":P}           e.g. session/cancel
//   {"op":"cancel_request","target":ID}             abort request ID: the SDK sends $/cancel_request
//   {"op":"set_buffer","path":P,"text":T|null}      an unsaved editor buffer fs/read_text_file
//                                                   answers from instead of the disk (null: none)
//   {"op":"set_permission","choose":K}              K: allow_once | allow_always | reject_once |
//                                                   reject_always | cancelled (the default)
// Closing our stdin ends the agent (its stdin closed, then SIGTERM, then SIGKILL) and this script.
//
// Reports (one JSON object per line), in the order the agent wrote what they describe:
//   {"kind":"update","params":P}                     each session/update, as the agent wrote it
//   {"kind":"request","method":M,"id":I,"params":P}  each request the agent made of the client
//   {"kind":"notification","method":M,"params":P}    any other notification from the agent
//   {"kind":"answer","method":M,"id":I,"result":R}   what this client answered (or "error":E)
//   {"kind":"schema_error","message":S,"payload":X}  an agent message the SDK's JSON schema rejects
//   {"kind":"garbage","line":L}                      an agent stdout line that is not a JSON-RPC
//                                                    message, a blank one too (stdout must carry
//                                                    the protocol only)
//   {"kind":"protocol_error","message":S,"payload":X} valid JSON-RPC used wrongly: a response to
//                                                    no request, a client method the client did
//                                                    not offer, a relative path
//   {"kind":"exit","code":C,"signal":S}              the agent process ended
//
// Every line the agent writes is looked at before the SDK parses it ("tapped"): the SDK's own
// parsing is forgiving by design (unknown or broken fields fall back to defaults), so on its own
// it would hide mistakes an editor with a stricter client would trip on. The tap validates each
// message against the SDK's bundled JSON schema (schema/v1/schema.json; schema.unstable.json
// with --schema unstable), per method: requests and notifications by their method, responses by
// the method of the request they answer.
//
// Client-side requests are answered for real: files are read from and written to the disk,
// terminals run their command with child_process (no shell: command and args as given; stdout
// and stderr into one output), permission requests follow the policy.
// The agent's stderr passes straight through to ours.

import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const STOP_GRACE_MS = 3000; // how long the agent gets to exit after its stdin closes
const PERMISSION_CHOICES = ["allow_once", "allow_always", "reject_once", "reject_always", "cancelled"];

function parseArgs(argv) {
  const options = { prefix: null, schema: "stable", agent: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      options.agent = argv.slice(i + 1);
      break;
    } else if (arg === "--prefix") {
      options.prefix = argv[++i];
    } else if (arg === "--schema") {
      options.schema = argv[++i];
    } else {
      throw new Error(`acp_client.mjs: unknown argument ${arg}`);
    }
  }
  if (!options.prefix || options.agent.length === 0 || !["stable", "unstable"].includes(options.schema)) {
    throw new Error("usage: acp_client.mjs --prefix DIR [--schema stable|unstable] -- AGENT ARGV...");
  }
  return options;
}

const options = parseArgs(process.argv.slice(2));
// The SDK lives in the test cache, not next to this file: resolve it from there.
const requireFromPrefix = createRequire(path.join(path.resolve(options.prefix), "package.json"));
const acp = await import(pathToFileURL(requireFromPrefix.resolve("@agentclientprotocol/sdk")).href);
const Ajv2020 = requireFromPrefix("ajv/dist/2020").default;
const schemaFile = requireFromPrefix.resolve(
  `@agentclientprotocol/sdk/schema/v1/${options.schema === "stable" ? "schema.json" : "schema.unstable.json"}`,
);

function report(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function note(text) {
  process.stderr.write(`[acp_client.mjs] ${text}\n`);
}

// ---------------------------------------------------------------- schema validation

/** The validators the tap needs, keyed by what the schema says each type is for (its `x-side`
 * and `x-method` annotations), so no method list is written here by hand. Each is compiled when
 * first used: compiling them all (the schema's top-level union of every message) would cost a
 * third of a second on every start. */
function loadValidators(schema) {
  // validateSchema: the SDK's schema is trusted, checking it against the meta-schema is slow.
  const ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: true, validateSchema: false });
  const integer = (low, high) => ({
    type: "number",
    validate: (n) => Number.isInteger(n) && n >= low && n <= high,
  });
  ajv.addFormat("int32", integer(-(2 ** 31), 2 ** 31 - 1));
  ajv.addFormat("uint16", integer(0, 2 ** 16 - 1));
  ajv.addFormat("uint32", integer(0, 2 ** 32 - 1));
  ajv.addFormat("int64", integer(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
  ajv.addFormat("uint64", integer(0, Number.MAX_SAFE_INTEGER));
  ajv.addFormat("double", { type: "number", validate: (n) => Number.isFinite(n) });
  ajv.addFormat("uri", (text) => URL.canParse(text));
  const { anyOf: _everyMessage, ...definitions } = schema;
  ajv.addSchema(definitions, "acp");
  if (!schema.$defs.Error || !schema.$defs.RequestId) throw new Error("the ACP schema lacks Error or RequestId");
  const lazy = (name) => {
    let compiled = null;
    return {
      name,
      validate(value) {
        compiled ??= ajv.compile({ $ref: `acp#/$defs/${name}` });
        const valid = compiled(value);
        this.errors = compiled.errors;
        return valid;
      },
    };
  };
  const agentRequests = new Map(); // agent -> client request params, by method
  const agentNotifications = new Map(); // agent -> client notification params, by method
  const agentResults = new Map(); // agent's results, by the method of the client's request
  for (const [name, def] of Object.entries(schema.$defs)) {
    const method = def["x-method"];
    const side = def["x-side"]; // the side that handles the method
    if (!method) continue;
    if (side === "client" && name.endsWith("Request")) agentRequests.set(method, lazy(name));
    else if (side === "client" && name.endsWith("Notification")) agentNotifications.set(method, lazy(name));
    else if (side === "agent" && name.endsWith("Response")) agentResults.set(method, lazy(name));
    else if (side === "protocol" && name.endsWith("Notification")) agentNotifications.set(method, lazy(name));
  }
  return { agentRequests, agentNotifications, agentResults, error: lazy("Error"), requestId: lazy("RequestId") };
}

const validators = loadValidators(JSON.parse(await readFile(schemaFile, "utf8")));

function describeErrors(errors) {
  const said = [];
  for (const error of errors ?? []) {
    const text = `${error.instancePath || "/"} ${error.message}${
      error.params && Object.keys(error.params).length ? " " + JSON.stringify(error.params) : ""
    }`;
    if (!said.includes(text)) said.push(text);
  }
  return said.slice(0, 8).join("; ") + (said.length > 8 ? `; and ${said.length - 8} more` : "");
}

function check(validator, value, what, payload) {
  if (!validator.validate(value)) {
    report({
      kind: "schema_error",
      message: `${what} is not a valid ${validator.name}: ${describeErrors(validator.errors)}`,
      payload,
    });
    return false;
  }
  return true;
}

const sentRequests = new Map(); // JSON-RPC id of each request this client sent -> its method

function schemaError(message, payload) {
  report({ kind: "schema_error", message, payload });
}

/** Validates one message the agent wrote and reports what it carries. */
function inspectMessage(message) {
  if (message.jsonrpc !== "2.0") schemaError('"jsonrpc" is not "2.0"', message);
  if ("id" in message) check(validators.requestId, message.id, "the id", message);
  if ("method" in message) {
    const { method } = message;
    if (typeof method !== "string") return schemaError("the method is not a string", message);
    if ("result" in message || "error" in message) schemaError("a request carries a result or an error", message);
    const params = message.params ?? {};
    if (message.params !== undefined && (typeof message.params !== "object" || message.params === null)) {
      schemaError(`the params of ${method} are not an object or an array`, message);
    }
    const extension = method.startsWith("_");
    if ("id" in message) {
      const validator = validators.agentRequests.get(method);
      if (validator) check(validator, params, `the params of the request ${method}`, message);
      else if (!extension) schemaError(`${method} is not a request an agent may send to a client`, message);
      report({ kind: "request", method, id: message.id, params: message.params ?? null });
    } else {
      const validator = validators.agentNotifications.get(method);
      if (validator) check(validator, params, `the params of the notification ${method}`, message);
      else if (!extension) schemaError(`${method} is not a notification an agent may send to a client`, message);
      if (method === "session/update") report({ kind: "update", params: message.params ?? null });
      else report({ kind: "notification", method, params: message.params ?? null });
    }
    return;
  }
  if (!("id" in message)) return schemaError("neither a request, a notification nor a response", message);
  const hasResult = "result" in message;
  const hasError = "error" in message;
  if (hasResult === hasError) schemaError("a response needs exactly one of result and error", message);
  const method = sentRequests.get(message.id);
  if (method === undefined) {
    report({ kind: "protocol_error", message: `a response to no pending request (id ${JSON.stringify(message.id)})`, payload: message });
    return;
  }
  sentRequests.delete(message.id);
  if (hasError) {
    check(validators.error, message.error, `the error answering ${method}`, message);
  } else if (hasResult) {
    const validator = validators.agentResults.get(method);
    if (validator) check(validator, message.result, `the result of ${method}`, message);
  }
}

/** Splits the agent's stdout into lines and inspects each, before the SDK sees the bytes. */
function makeTap() {
  let pending = Buffer.alloc(0);
  const line = (bytes) => {
    const text = bytes.toString("utf8");
    const body = text.endsWith("\r") ? text.slice(0, -1) : text;
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      report({ kind: "garbage", line: text });
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      report({ kind: "garbage", line: text });
      return;
    }
    inspectMessage(message);
  };
  return {
    push(chunk) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let end;
      while ((end = pending.indexOf(10)) >= 0) {
        line(pending.subarray(0, end));
        pending = pending.subarray(end + 1);
      }
    },
    end() {
      if (pending.length) {
        report({ kind: "protocol_error", message: "the agent's last line has no newline", payload: pending.toString("utf8") });
        line(pending);
        pending = Buffer.alloc(0);
      }
    },
  };
}

// ---------------------------------------------------------------- the agent process

const agentProcess = spawn(options.agent[0], options.agent.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
let agentExit = null;
const agentExited = new Promise((resolve) => {
  agentProcess.on("exit", (code, signal) => {
    agentExit = { code, signal };
    report({ kind: "exit", code, signal });
    resolve(agentExit);
  });
  agentProcess.on("error", (error) => {
    if (agentExit) return;
    agentExit = { code: null, signal: null, error: error.message };
    report({ kind: "exit", code: null, signal: null, error: error.message });
    resolve(agentExit);
  });
});
agentProcess.stdin.on("error", () => {}); // EPIPE once the agent has gone: its exit is reported

const tap = makeTap();
const fromAgent = new ReadableStream({
  start(controller) {
    agentProcess.stdout.on("data", (chunk) => {
      tap.push(chunk);
      controller.enqueue(new Uint8Array(chunk));
    });
    agentProcess.stdout.on("end", () => {
      tap.end();
      controller.close();
    });
    agentProcess.stdout.on("error", (error) => controller.error(error));
  },
});
const sdkStream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), fromAgent);
const sdkWriter = sdkStream.writable.getWriter();
/** The SDK numbers its requests itself: note each id's method on the way out, so the tap knows
 * which result type a response must have. */
const stream = {
  readable: sdkStream.readable,
  writable: new WritableStream({
    write(message) {
      if (message && typeof message === "object" && "method" in message && "id" in message) {
        sentRequests.set(message.id, message.method);
      }
      return sdkWriter.write(message);
    },
    close() {
      return sdkWriter.close();
    },
  }),
};

// ---------------------------------------------------------------- answering the agent

let offered = {}; // the clientCapabilities of the test's initialize
let permissionPolicy = "cancelled";
const buffers = new Map(); // absolute path -> unsaved text
const terminals = new Map();
let terminalCount = 0;

function protocolError(message, payload) {
  report({ kind: "protocol_error", message, payload });
}

/** A client that did not offer a capability has no such method: say so, as such a client would. */
function requireOffered(offeredIt, method, params) {
  if (!offeredIt) {
    protocolError(`the agent called ${method}, which the client did not offer in initialize`, params);
    throw acp.RequestError.methodNotFound(method);
  }
}

function requireAbsolute(value, what, method, params) {
  if (typeof value !== "string" || !path.isAbsolute(value)) {
    protocolError(`${method}: ${what} ${JSON.stringify(value)} is not an absolute path`, params);
    throw acp.RequestError.invalidParams({ [what]: value }, `${what} must be an absolute path`);
  }
}

/** Registers a handler that reports what it answered (or the error it gave). */
function answering(method, handler) {
  return async (context) => {
    try {
      const result = await handler(context.params, method);
      report({ kind: "answer", method, id: context.requestId, result: result ?? null });
      return result;
    } catch (error) {
      report({ kind: "answer", method, id: context.requestId, error: errorOf(error) });
      throw error;
    }
  };
}

function selectLines(text, line, limit) {
  if (line == null && limit == null) return text;
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const start = Math.max((line ?? 1) - 1, 0);
  return lines.slice(start, limit == null ? undefined : start + limit).join("");
}

async function readTextFile(params, method) {
  requireOffered(offered.fs?.readTextFile, method, params);
  requireAbsolute(params.path, "path", method, params);
  let text = buffers.get(path.resolve(params.path));
  if (text === undefined) {
    try {
      text = await readFile(params.path, "utf8");
    } catch (error) {
      if (error.code === "ENOENT") throw acp.RequestError.resourceNotFound(params.path);
      throw acp.RequestError.internalError({ path: params.path }, error.message);
    }
  }
  return { content: selectLines(text, params.line, params.limit) };
}

async function writeTextFile(params, method) {
  requireOffered(offered.fs?.writeTextFile, method, params);
  requireAbsolute(params.path, "path", method, params);
  await mkdir(path.dirname(params.path), { recursive: true });
  await writeFile(params.path, params.content, "utf8");
  const key = path.resolve(params.path);
  if (buffers.has(key)) buffers.set(key, params.content); // the editor's open buffer follows
  return {};
}

function requestPermission(params) {
  if (permissionPolicy === "cancelled") return { outcome: { outcome: "cancelled" } };
  const option = (params.options ?? []).find((candidate) => candidate.kind === permissionPolicy);
  if (!option) {
    note(`no permission option of kind ${permissionPolicy} offered; answering cancelled`);
    return { outcome: { outcome: "cancelled" } };
  }
  return { outcome: { outcome: "selected", optionId: option.optionId } };
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Keeps at most `limit` bytes of output, dropping from the start at a character boundary. */
function appendOutput(terminal, chunk) {
  let output = Buffer.concat([terminal.output, chunk]);
  if (terminal.limit != null && output.length > terminal.limit) {
    let start = output.length - terminal.limit;
    while (start < output.length && (output[start] & 0xc0) === 0x80) start++;
    output = output.subarray(start);
    terminal.truncated = true;
  }
  terminal.output = output;
}

async function createTerminal(params, method) {
  requireOffered(offered.terminal, method, params);
  if (params.cwd != null) requireAbsolute(params.cwd, "cwd", method, params);
  const env = { ...process.env };
  for (const variable of params.env ?? []) env[variable.name] = variable.value;
  // No shell: the command and its arguments are run as given (detached: its own process group,
  // so terminal/kill ends what it started too).
  const child = spawn(params.command, params.args ?? [], {
    cwd: params.cwd ?? process.cwd(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  await new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  }).catch((error) => {
    throw acp.RequestError.internalError({ command: params.command }, `cannot run ${params.command}: ${error.message}`);
  });
  const terminal = { child, output: Buffer.alloc(0), truncated: false, limit: params.outputByteLimit ?? null, exit: null };
  terminal.exited = new Promise((resolve) => {
    child.on("close", (code, signal) => {
      terminal.exit = { exitCode: code, signal };
      resolve(terminal.exit);
    });
  });
  child.stdout.on("data", (chunk) => appendOutput(terminal, chunk));
  child.stderr.on("data", (chunk) => appendOutput(terminal, chunk));
  const terminalId = `term-${++terminalCount}`;
  terminals.set(terminalId, terminal);
  return { terminalId };
}

function terminalOf(params) {
  const terminal = terminals.get(params.terminalId);
  if (!terminal) throw acp.RequestError.resourceNotFound(`terminal ${params.terminalId}`);
  return terminal;
}

function terminalOutput(params) {
  const terminal = terminalOf(params);
  const answer = { output: terminal.output.toString("utf8"), truncated: terminal.truncated };
  if (terminal.exit) answer.exitStatus = terminal.exit;
  return answer;
}

async function waitForExit(params) {
  return await terminalOf(params).exited;
}

function killTerminal(params) {
  const terminal = terminalOf(params);
  if (!terminal.exit) killGroup(terminal.child, "SIGKILL");
  return {};
}

function releaseTerminal(params) {
  const terminal = terminalOf(params);
  if (!terminal.exit) killGroup(terminal.child, "SIGKILL");
  terminals.delete(params.terminalId);
  return {};
}

const m = acp.methods.client;
const app = acp
  .client({ name: "pi-tui tests" })
  .onNotification(m.session.update, () => {}) // reported by the tap, as written
  .onNotification("*", () => {})
  .onRequest(m.session.requestPermission, answering(m.session.requestPermission, requestPermission))
  .onRequest(m.fs.readTextFile, answering(m.fs.readTextFile, readTextFile))
  .onRequest(m.fs.writeTextFile, answering(m.fs.writeTextFile, writeTextFile))
  .onRequest(m.terminal.create, answering(m.terminal.create, createTerminal))
  .onRequest(m.terminal.output, answering(m.terminal.output, terminalOutput))
  .onRequest(m.terminal.waitForExit, answering(m.terminal.waitForExit, waitForExit))
  .onRequest(m.terminal.kill, answering(m.terminal.kill, killTerminal))
  .onRequest(m.terminal.release, answering(m.terminal.release, releaseTerminal));
const connection = app.connect(stream);
const agent = connection.agent;

// ---------------------------------------------------------------- the test's commands

function errorOf(error) {
  if (error instanceof acp.RequestError || (error && typeof error.code === "number")) {
    return { code: error.code, message: error.message, data: error.data ?? null };
  }
  return { code: null, message: String(error?.message ?? error), data: null };
}

const cancellers = new Map(); // command id -> AbortController of its request

function sendRequest(command) {
  const { id, method } = command;
  const params = command.params ?? {};
  if (method === "initialize") offered = params.clientCapabilities ?? {};
  const canceller = new AbortController();
  cancellers.set(id, canceller);
  agent
    .request(method, params, { cancellationSignal: canceller.signal })
    .then(
      (result) => report({ kind: "response", id, result: result ?? null }),
      (error) => report({ kind: "error", id, error: errorOf(error) }),
    )
    .finally(() => cancellers.delete(id));
}

function run(command) {
  switch (command.op) {
    case "request":
      return sendRequest(command);
    case "notify":
      return void agent.notify(command.method, command.params ?? {}).catch((error) => note(`notify ${command.method}: ${error.message}`));
    case "cancel_request":
      return void cancellers.get(command.target)?.abort();
    case "set_buffer":
      if (command.text == null) buffers.delete(path.resolve(command.path));
      else buffers.set(path.resolve(command.path), command.text);
      return;
    case "set_permission":
      if (!PERMISSION_CHOICES.includes(command.choose)) throw new Error(`unknown permission choice ${command.choose}`);
      permissionPolicy = command.choose;
      return;
    default:
      throw new Error(`unknown op ${command.op}`);
  }
}

async function shutdown() {
  for (const terminal of terminals.values()) if (!terminal.exit) killGroup(terminal.child, "SIGKILL");
  agentProcess.stdin.end();
  const waited = (ms) => Promise.race([agentExited, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
  if (!agentExit) await waited(STOP_GRACE_MS);
  if (!agentExit) {
    note("the agent did not exit when its stdin closed; sending SIGTERM");
    agentProcess.kill("SIGTERM");
    await waited(STOP_GRACE_MS);
  }
  if (!agentExit) {
    note("the agent ignored SIGTERM; sending SIGKILL");
    agentProcess.kill("SIGKILL");
    await agentExited;
  }
  connection.close();
  process.stdout.write("", () => process.exit(0));
}

const commands = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
commands.on("line", (line) => {
  if (!line.trim()) return;
  try {
    run(JSON.parse(line));
  } catch (error) {
    note(`bad command ${line}: ${error.message}`);
    report({ kind: "bad_command", line, message: error.message });
  }
});
commands.on("close", () => void shutdown());
