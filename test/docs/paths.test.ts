// Every repository path the docs and the code's comments name must exist: a file moved or removed leaves its old name
// behind in prose, where nothing else would notice it.
//
// A repository path is a run of path characters ([\w./@-]) that is not part of a longer one (so `dist/src/x.ts`, a
// URL and `../x/y.ts` name none) and either starts with one of the tree's top folders followed by `/`, or is a file
// that lives at the top of the tree (README.md, package.json, …); it ends with an extension or a `/` (a folder).
// Runs holding a glob (`*`), a placeholder (`<resource>`, `{a,b}`) or a `..` segment are not paths. A sentence's
// full stop after a path is not part of it. Markdown link targets are checked relative to the file that links.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

const TOP_FOLDERS = ['src', 'test', 'docs', 'bench', 'scripts', 'console', 'bin'];
const ROOT_FILE =
  /^(?:README\.md|CHANGELOG\.md|package(?:-lock)?\.json|tsconfig(?:\.[\w-]+)?\.json|[\w-]+\.config\.[cm]?[jt]s|openapi\.json|compose\.ya?ml|redocly\.yaml)$/;
// Glob and placeholder characters are taken into a run so that the run is then refused whole, not cut at them.
const RUN = /[\w./@*<>{}$~-]+/g;
const LINK = /\]\(([^()\s]+)\)/g;

/** The repository paths one line of prose names. */
function namedPaths(line: string): string[] {
  const paths: string[] = [];
  for (const [run] of line.matchAll(RUN)) {
    const path = run.replace(/\.+$/, '');
    if (/[*<>{}$~]/.test(path) || path.split('/').includes('..')) continue;
    const inFolder = TOP_FOLDERS.some((folder) => path.startsWith(`${folder}/`));
    if (!inFolder && !ROOT_FILE.test(path)) continue;
    if (path.endsWith('/') || /\.\w+$/.test(posix.basename(path))) paths.push(path);
  }
  return paths;
}

/** The local targets of a line's Markdown links, without their anchors. */
function linkTargets(line: string): string[] {
  return [...line.matchAll(LINK)]
    .map(([, target]) => target!.replace(/#.*$/, ''))
    .filter((target) => target !== '' && !/^[a-z][a-z+.-]*:/i.test(target));
}

interface Named {
  file: string;
  line: number;
  path: string;
}

function markdownNames(file: string): Named[] {
  const names: Named[] = [];
  readFileSync(join(root, file), 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const line = i + 1;
      for (const target of linkTargets(text)) names.push({ file, line, path: posix.join(posix.dirname(file), target) });
      for (const path of namedPaths(text.replace(LINK, ']'))) names.push({ file, line, path });
    });
  return names;
}

const S = ts.SyntaxKind;
/** Tokens after which a `/` divides; after any other, it starts a regular expression. */
const ENDS_EXPRESSION = new Set([
  S.Identifier,
  S.PrivateIdentifier,
  S.NumericLiteral,
  S.BigIntLiteral,
  S.StringLiteral,
  S.NoSubstitutionTemplateLiteral,
  S.TemplateTail,
  S.RegularExpressionLiteral,
  S.CloseParenToken,
  S.CloseBracketToken,
  S.CloseBraceToken,
  S.PlusPlusToken,
  S.MinusMinusToken,
  S.ThisKeyword,
  S.SuperKeyword,
  S.TrueKeyword,
  S.FalseKeyword,
  S.NullKeyword,
]);

/**
 * The comments of a TypeScript file, each with the line it starts on: TypeScript's scanner over the text, told where a
 * template literal goes on after its `${…}` and where a `/` starts a regular expression, so that strings, templates
 * and patterns never count. It finds what walking every node of the parsed file finds, in a tenth of the time.
 */
function commentsOf(text: string): { line: number; text: string }[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const lineStarts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lineStarts.push(at + 1);
  /** The 1-based line of a position: the number of line starts at or before it. */
  const lineOf = (pos: number): number => {
    let low = 0;
    let high = lineStarts.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (lineStarts[middle]! <= pos) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const comments: { line: number; text: string }[] = [];
  // The braces open inside each template literal's `${…}` being read, innermost last.
  const braces: number[] = [];
  let previous: ts.SyntaxKind = S.Unknown;
  for (let kind = scanner.scan(); kind !== S.EndOfFileToken; kind = scanner.scan()) {
    if (kind === S.SingleLineCommentTrivia || kind === S.MultiLineCommentTrivia) {
      comments.push({ line: lineOf(scanner.getTokenStart()), text: scanner.getTokenText() });
      continue;
    }
    if (kind === S.WhitespaceTrivia || kind === S.NewLineTrivia || kind === S.ShebangTrivia) continue;
    if (kind === S.TemplateHead) braces.push(0);
    else if (kind === S.OpenBraceToken && braces.length > 0) braces[braces.length - 1]! += 1;
    else if (kind === S.CloseBraceToken && braces.length > 0) {
      if (braces.at(-1) === 0) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === S.TemplateTail) braces.pop();
      } else braces[braces.length - 1]! -= 1;
    } else if ((kind === S.SlashToken || kind === S.SlashEqualsToken) && !ENDS_EXPRESSION.has(previous))
      kind = scanner.reScanSlashToken();
    previous = kind;
  }
  return comments;
}

function commentNames(file: string): Named[] {
  return commentsOf(readFileSync(join(root, file), 'utf8')).flatMap((comment) =>
    comment.text
      .split('\n')
      .flatMap((text, i) => namedPaths(text).map((path) => ({ file, line: comment.line + i, path }))),
  );
}

function filesUnder(folder: string, extension: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(extension))
    .map((name) => posix.join(folder, name.split('\\').join('/')))
    .sort();
}

function exists(path: string): boolean {
  const full = join(root, path);
  return path.endsWith('/') ? existsSync(full) && statSync(full).isDirectory() : existsSync(full);
}

describe('repository paths named in prose', () => {
  it('takes paths from a line and leaves what is not one', () => {
    expect(namedPaths('see src/storage/tx/scope.ts. and `test/unit/` (docs/DESIGN.md §44), README.md')).toEqual([
      'src/storage/tx/scope.ts',
      'test/unit/',
      'docs/DESIGN.md',
      'README.md',
    ]);
    expect(
      namedPaths('src/modules/<resource>/schemas.ts test/docs/**/*.test.ts src/x/{a,b}.ts ../shared/read.ts'),
    ).toEqual([]);
    expect(
      namedPaths('dist/bundle/secinv.js ../../dist/console/ https://x.dev/src/a.ts ./src/a.ts src/storage'),
    ).toEqual([]);
    expect(namedPaths('api.md §3, schemas.ts and ARCHITECTURE.md, package.json, vitest.config.ts')).toEqual([
      'package.json',
      'vitest.config.ts',
    ]);
    expect(linkTargets('[a](ARCHITECTURE.md#layers) [b](https://x.dev/a.md) [c](#top)')).toEqual(['ARCHITECTURE.md']);
  });

  it('exist in the tree', () => {
    const markdown = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'))].map(
      (name) => (name === 'README.md' ? name : `docs/${name}`),
    );
    const code = ['src', 'test', 'bench', 'scripts'].flatMap((folder) => filesUnder(folder, '.ts'));
    const names = [...markdown.flatMap(markdownNames), ...code.flatMap(commentNames)];
    const missing = names.filter((name) => !exists(name.path)).map((n) => `${n.file}:${n.line}: ${n.path}`);
    expect(missing).toEqual([]);
    // The scan found something to check, so an extractor that finds nothing cannot pass.
    expect(names.length).toBeGreaterThan(500);
  });
});
