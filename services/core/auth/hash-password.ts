// Make a password hash for the master configuration's auth.users (or the users file):
//
//   node --import tsx services/core/auth/hash-password.ts            # asks twice, no echo
//   printf '%s\n' "$PASSWORD" | node --import tsx services/core/auth/hash-password.ts
//   ... hash-password.ts --N 65536 --r 8 --p 1                        # other scrypt costs
//
// The password is read from the terminal or standard input, never from the command line
// (where `ps` would show it). The hash goes to standard output.
import { stderr, stdin, stdout } from 'node:process';
import { DEFAULT_PARAMS, hashPassword, paramsAllowed } from './password.js';

function usage(msg: string): never {
  stderr.write(
    `${msg}\nusage: hash-password.ts [--N <power of two>] [--r <n>] [--p <n>] (password on stdin)\n`,
  );
  process.exit(2);
}

function parseArgs(argv: string[]): { N: number; r: number; p: number } {
  const params: { N: number; r: number; p: number } = { ...DEFAULT_PARAMS };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i]!.replace(/^--?/, '');
    const v = Number(argv[i + 1]);
    if (!['N', 'r', 'p'].includes(k) || !Number.isInteger(v) || v < 1) usage(`bad argument ${argv[i]}`);
    params[k as 'N' | 'r' | 'p'] = v;
  }
  return params;
}

function readLineHidden(prompt: string): Promise<string> {
  return new Promise((resolve) => {
    stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    let s = '';
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          stderr.write('\n');
          resolve(s);
          return;
        }
        if (ch === '\u0003') process.exit(130);
        if (ch === '\u007f') s = s.slice(0, -1);
        else s += ch;
      }
    };
    stdin.on('data', onData);
  });
}

async function readStdin(): Promise<string> {
  let s = '';
  for await (const chunk of stdin) s += chunk;
  return s.replace(/\r?\n$/, '');
}

const params = parseArgs(process.argv.slice(2));
if (!paramsAllowed(params.N, params.r, params.p)) {
  usage('N must be a power of two, r at most 64, p at most 16, and 128*N*r at most 256 MiB');
}
let password: string;
if (stdin.isTTY) {
  password = await readLineHidden('Password: ');
  if ((await readLineHidden('Again: ')) !== password) usage('the passwords differ');
} else {
  password = await readStdin();
}
if (password === '') usage('empty password');
stdout.write(`${await hashPassword(password, params)}\n`);
