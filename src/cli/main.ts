#!/usr/bin/env node
// The `chrysalis` command: dispatches to its subcommands; every failure is one line on stderr and a non-zero exit
// (1 for rejected input or a failed operation, 2 for a usage mistake).
import { auth, keygen, message, networkIdCommand, pow, type Command } from "./commands.js";
import { coordinatorCommand } from "./coordinator.js";
import { demoCommand } from "./demo.js";
import { describeError, Interrupted, UsageError, write } from "./io.js";
import { p2pCommand } from "./p2p.js";
import { serveCommand } from "./serve.js";
import { dbCommand, snapshotCommand } from "./storage.js";

const COMMANDS: Record<string, Command> = {
  serve: serveCommand,
  demo: demoCommand,
  keygen,
  auth,
  snapshot: snapshotCommand,
  db: dbCommand,
  coordinator: coordinatorCommand,
  message,
  pow,
  "network-id": networkIdCommand,
  p2p: p2pCommand,
};

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `chrysalis: the Chrysalis message interface from the command line

Usage: chrysalis <command> [options]

Commands:
${lines.join("\n")}

Run "chrysalis <command> --help" for a command's options.`;
}

/** Runs the command line; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    if (topic !== undefined && COMMANDS[topic] !== undefined) write(COMMANDS[topic].usage);
    else write(overview());
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v") {
    write("0.1.0");
    return 0;
  }
  const command = Object.prototype.hasOwnProperty.call(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    process.stderr.write(`chrysalis: unknown command "${name}" (run chrysalis --help)\n`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    write(command.usage);
    return 0;
  }
  try {
    await command.run(rest);
    return 0;
  } catch (error) {
    // parseArgs reports unknown or malformed options as TypeErrors carrying an ERR_PARSE_ARGS_* code.
    const code = (error as { code?: unknown }).code;
    const usage = error instanceof UsageError || (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS"));
    process.stderr.write(`chrysalis ${name}: ${describeError(error)}${usage ? ` (see chrysalis ${name} --help)` : ""}\n`);
    if (error instanceof Interrupted) return 130;
    return usage ? 2 : 1;
  }
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
