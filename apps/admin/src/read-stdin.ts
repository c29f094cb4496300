/**
 * Reads a secret piped on stdin (without its final newline). Secrets never travel in argv, which
 * `ps` and shell history show. On a terminal the user types it and ends with Ctrl-D.
 */
export async function readStdin(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}
