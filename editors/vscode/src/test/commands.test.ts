import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { CHAT_COMMANDS, contributions, PALETTE } from "../commands";

const root = path.resolve(__dirname, "..", "..");

test("package.json's commands and palette entries are the command table's", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
    contributes: { commands: unknown[]; menus: { commandPalette: unknown[] } };
  };
  const made = contributions();
  assert.deepEqual(pkg.contributes.commands, made.commands);
  assert.deepEqual(pkg.contributes.menus.commandPalette, made.commandPalette);
  assert.equal(new Set(PALETTE.map((c) => c.id)).size, PALETTE.length);
});

test("every command of the table is registered: by extension.ts's table of handlers, or by chat.ts", () => {
  const extension = fs.readFileSync(path.join(root, "src", "extension.ts"), "utf8");
  const chat = fs.readFileSync(path.join(root, "src", "chat.ts"), "utf8");
  for (const { id } of PALETTE) {
    const byChat = (CHAT_COMMANDS as readonly string[]).includes(id);
    assert.ok(byChat ? chat.includes(`registerCommand("${id}"`) : extension.includes(`"${id}": `), id);
  }
});
