/**
 * What the host's fetches and pushes take of git config (issue 42, item 1): of the person's own config only
 * plain credential helpers; of the repository's, nothing that picks a transport, rewrites the remote's URL or
 * sends the talk through a proxy. Real git reads real config files: the person's global one is a file of the
 * test's own (GIT_CONFIG_GLOBAL, this worker's environment alone).
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { remoteSettings, RemoteSettingError } from '../../../src-main/git/taskRemote.js';
import { gitSync, makeRepo } from '../../helpers/gitFixture.js';

let root = '';
let repo = '';
const globalBefore = process.env.GIT_CONFIG_GLOBAL;
beforeEach(() => {
  root = fs.mkdtempSync(join(tmpdir(), 'fb-remote-settings-'));
  repo = join(root, 'repo');
  makeRepo(repo);
  process.env.GIT_CONFIG_GLOBAL = join(root, 'person.gitconfig');
  fs.writeFileSync(process.env.GIT_CONFIG_GLOBAL, '');
});
afterEach(() => {
  if (globalBefore === undefined) delete process.env.GIT_CONFIG_GLOBAL;
  else process.env.GIT_CONFIG_GLOBAL = globalBefore;
  fs.rmSync(root, { recursive: true, force: true });
});

const person = (key: string, value: string) => gitSync(root, ['config', '--file', process.env.GIT_CONFIG_GLOBAL as string, '--add', key, value]);
const repository = (key: string, value: string) => gitSync(repo, ['config', '--add', key, value]);
const URL = 'https://git.example.com/team/app.git';

describe('what a fetch or push of the host takes of git config', () => {
  it("the person's plain credential helpers, never a shell line or a program anyone here can write; the repository's helpers none", async () => {
    const helper = join(root, 'git-credential-mine');
    fs.writeFileSync(helper, '#!/bin/sh\n', { mode: 0o755 });
    person('credential.helper', 'cache --timeout=3600');
    person('credential.helper', '!f() { cat ~/.secret; }; f');
    person('credential.helper', helper);
    person('credential.helper', 'store --file ~/.git-credentials');
    repository('credential.helper', 'store');
    expect(await remoteSettings(repo, URL, true)).toEqual(['-c', 'credential.helper=cache --timeout=3600', '-c', 'credential.helper=store --file ~/.git-credentials']);
  });

  it("each transport the repository's config allows by name is put back to never, but file, ssh and https", async () => {
    repository('protocol.ext.allow', 'always');
    repository('protocol.file.allow', 'always');
    repository('protocol.fd.allow', 'always');
    expect(await remoteSettings(repo, URL, false)).toEqual(['-c', 'protocol.ext.allow=never', '-c', 'protocol.fd.allow=never']);
  });

  it("a rewrite of the remote's URL in the repository's config stops the command, saying which; pushInsteadOf only a push; the person's own rewrites are not read at all", async () => {
    person('url.ext::sh -c evil.insteadOf', 'https://');
    repository('url.https://elsewhere.example.com/.insteadOf', 'https://nowhere.example.com/');
    expect(await remoteSettings(repo, URL, true)).toEqual([]);
    repository('url.ext::sh -c evil.pushInsteadOf', 'https://git.example.com/');
    expect(await remoteSettings(repo, URL, false)).toEqual([]);
    await expect(remoteSettings(repo, URL, true)).rejects.toThrow(RemoteSettingError);
    await expect(remoteSettings(repo, URL, true)).rejects.toThrow(/url\.ext::sh -c evil\.pushInsteadOf = https:\/\/git\.example\.com\/.*nothing was sent/);
    repository('url.ssh://mirror.example.com/.insteadOf', 'https://git.example.com/team');
    await expect(remoteSettings(repo, URL, false)).rejects.toThrow(/url\.ssh:\/\/mirror\.example\.com\/\.insteadOf/);
  });

  it("an http proxy or a TLS setting of the repository's stops the command", async () => {
    repository('http.https://git.example.com/.sslVerify', 'false');
    await expect(remoteSettings(repo, URL, false)).rejects.toThrow(/sets http\.https:\/\/git\.example\.com\/\.sslverify = false/);
  });
});
