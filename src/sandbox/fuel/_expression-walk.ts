/**
 * Where fuel instrumentation goes in a function body: its `loop` expressions and its bulk memory operations
 * (`memory.fill`, `memory.copy`, `memory.init`), found by walking binaryen's expression tree (`instrument.ts` inserts
 * the ticks and charges there). The walk knows the children of every expression kind it accepts and refuses the
 * others, so no loop hides under an expression it cannot look into; GC allocations are refused as well, since their
 * memory would escape the module's memory limit.
 * @module
 */
import type BinaryenNs from "binaryen";
import { ReachError } from "../../protocol/mod.ts";

/** The binaryen.js statics the instrumenter uses that binaryen 132's .d.ts does not declare. */
type Statics = {
  Function: {
    getBody(func: number): ExpressionRef;
    setBody(func: number, body: ExpressionRef): void;
    getName(func: number): string;
    getResults(func: number): number;
  };
  Loop: { getBody(loop: ExpressionRef): ExpressionRef; setBody(loop: ExpressionRef, body: ExpressionRef): void };
};
/** binaryen.js as the instrumenter uses it: its declared API and the statics above. */
export type Binaryen = typeof BinaryenNs & Statics;
/** A binaryen expression: a pointer into binaryen's heap (0: no expression). */
export type ExpressionRef = number;

type ChildFn = (b: Binaryen, e: ExpressionRef, out: ExpressionRef[]) => void;

/** Push the listed single-child getters of a binaryen expression class (0 = absent child, skipped later). */
function fields(cls: string, ...getters: string[]): ChildFn {
  return (b, e, out) => {
    const c = (b as unknown as Record<string, Record<string, (e: ExpressionRef) => ExpressionRef>>)[cls]!;
    for (const g of getters) out.push(c[g]!(e));
  };
}

/** Push the `getNumX` / `getXAt` list of a binaryen expression class, then the listed single children. */
function list(cls: string, num: string, at: string, ...getters: string[]): ChildFn {
  return (b, e, out) => {
    const c = (b as unknown as Record<string, Record<string, (e: ExpressionRef, i?: number) => ExpressionRef>>)[cls]!;
    const count = c[num]!(e);
    for (let i = 0; i < count; i++) out.push(c[at]!(e, i));
    for (const g of getters) out.push(c[g]!(e));
  };
}

const leaf: ChildFn = () => {};

/** Children of every expression kind the instrumenter walks, keyed by binaryen's `<Kind>Id` name. */
const CHILDREN: Record<string, ChildFn> = {
  BlockId: list("Block", "getNumChildren", "getChildAt"),
  IfId: fields("If", "getCondition", "getIfTrue", "getIfFalse"),
  LoopId: fields("Loop", "getBody"),
  BreakId: fields("Break", "getCondition", "getValue"),
  SwitchId: fields("Switch", "getCondition", "getValue"),
  CallId: list("Call", "getNumOperands", "getOperandAt"),
  CallIndirectId: list("CallIndirect", "getNumOperands", "getOperandAt", "getTarget"),
  LocalGetId: leaf,
  LocalSetId: fields("LocalSet", "getValue"),
  GlobalGetId: leaf,
  GlobalSetId: fields("GlobalSet", "getValue"),
  LoadId: fields("Load", "getPtr"),
  StoreId: fields("Store", "getPtr", "getValue"),
  ConstId: leaf,
  UnaryId: fields("Unary", "getValue"),
  BinaryId: fields("Binary", "getLeft", "getRight"),
  SelectId: fields("Select", "getIfTrue", "getIfFalse", "getCondition"),
  DropId: fields("Drop", "getValue"),
  ReturnId: fields("Return", "getValue"),
  MemorySizeId: leaf,
  MemoryGrowId: fields("MemoryGrow", "getDelta"),
  NopId: leaf,
  UnreachableId: leaf,
  AtomicRMWId: fields("AtomicRMW", "getPtr", "getValue"),
  AtomicCmpxchgId: fields("AtomicCmpxchg", "getPtr", "getExpected", "getReplacement"),
  AtomicWaitId: fields("AtomicWait", "getPtr", "getExpected", "getTimeout"),
  AtomicNotifyId: fields("AtomicNotify", "getPtr", "getNotifyCount"),
  AtomicFenceId: leaf,
  SIMDExtractId: fields("SIMDExtract", "getVec"),
  SIMDReplaceId: fields("SIMDReplace", "getVec", "getValue"),
  SIMDShuffleId: fields("SIMDShuffle", "getLeft", "getRight"),
  SIMDTernaryId: fields("SIMDTernary", "getA", "getB", "getC"),
  SIMDShiftId: fields("SIMDShift", "getVec", "getShift"),
  SIMDLoadId: fields("SIMDLoad", "getPtr"),
  SIMDLoadStoreLaneId: fields("SIMDLoadStoreLane", "getPtr", "getVec"),
  MemoryInitId: fields("MemoryInit", "getDest", "getOffset", "getSize"),
  DataDropId: leaf,
  MemoryCopyId: fields("MemoryCopy", "getDest", "getSource", "getSize"),
  MemoryFillId: fields("MemoryFill", "getDest", "getValue", "getSize"),
  PopId: leaf,
  RefNullId: leaf,
  RefIsNullId: fields("RefIsNull", "getValue"),
  RefFuncId: leaf,
  RefEqId: fields("RefEq", "getLeft", "getRight"),
  RefAsId: fields("RefAs", "getValue"),
  TableGetId: fields("TableGet", "getIndex"),
  TableSetId: fields("TableSet", "getIndex", "getValue"),
  TableSizeId: leaf,
  TableGrowId: fields("TableGrow", "getValue", "getDelta"),
  TryId: list("Try", "getNumCatchBodies", "getCatchBodyAt", "getBody"),
  ThrowId: list("Throw", "getNumOperands", "getOperandAt"),
  RethrowId: leaf,
  TupleMakeId: list("TupleMake", "getNumOperands", "getOperandAt"),
  TupleExtractId: fields("TupleExtract", "getTuple"),
  RefI31Id: fields("RefI31", "getValue"),
  I31GetId: fields("I31Get", "getI31"),
  CallRefId: list("CallRef", "getNumOperands", "getOperandAt", "getTarget"),
  RefTestId: fields("RefTest", "getRef"),
  RefCastId: fields("RefCast", "getRef"),
  BrOnId: fields("BrOn", "getRef"),
  StructGetId: fields("StructGet", "getRef"),
  StructSetId: fields("StructSet", "getRef", "getValue"),
  ArrayGetId: fields("ArrayGet", "getRef", "getIndex"),
  ArraySetId: fields("ArraySet", "getRef", "getIndex", "getValue"),
  ArrayLenId: fields("ArrayLen", "getRef"),
  ArrayFillId: fields("ArrayFill", "getRef", "getIndex", "getValue", "getSize"),
  ArrayCopyId: fields("ArrayCopy", "getDestRef", "getDestIndex", "getSrcRef", "getSrcIndex", "getLength"),
  ArrayInitDataId: fields("ArrayInitData", "getRef", "getIndex", "getOffset", "getSize"),
  ArrayInitElemId: fields("ArrayInitElem", "getRef", "getIndex", "getOffset", "getSize"),
};

let childTable: Map<number, ChildFn> | undefined;
let kindNames: Map<number, string> | undefined;

/** binaryen's numeric expression ids → child functions (built once, after binaryen is loaded). */
function childrenById(b: Binaryen): Map<number, ChildFn> {
  if (childTable !== undefined) return childTable;
  const table = new Map<number, ChildFn>();
  const names = new Map<number, string>();
  const ids = b as unknown as Record<string, unknown>;
  for (const key of Object.keys(ids)) {
    if (/^[A-Z]\w*Id$/.test(key) && typeof ids[key] === "number") names.set(ids[key], key.slice(0, -2));
  }
  for (const [key, fn] of Object.entries(CHILDREN)) {
    const id = ids[key];
    if (typeof id === "number") table.set(id, fn);
  }
  kindNames = names;
  childTable = table;
  return table;
}

/**
 * The `loop` expressions and bulk memory operations under `root`, found with an explicit stack (compiled code nests
 * blocks thousands deep). Refuses expression kinds whose children the binaryen JS API does not expose, so no loop
 * goes unmetered, and those that allocate outside the linear memory (GC objects).
 * @param b binaryen, loaded
 * @param root the body of a function
 * @param funcName the function's name, for the error
 * @returns the loops and the bulk memory operations (with their kind), in walk order
 * @throws ReachError `PACK_MALFORMED` for an expression kind the walk does not accept
 * @example const { loops, bulk } = collectSites(b, b.Function.getBody(func), b.Function.getName(func));
 */
export function collectSites(b: Binaryen, root: ExpressionRef, funcName: string): { loops: ExpressionRef[]; bulk: ["MemoryFill" | "MemoryCopy" | "MemoryInit", ExpressionRef][] } {
  const table = childrenById(b);
  const bulkIds = new Map<number, "MemoryFill" | "MemoryCopy" | "MemoryInit">([[b.MemoryFillId, "MemoryFill"], [b.MemoryCopyId, "MemoryCopy"], [b.MemoryInitId, "MemoryInit"]]);
  const loopId = b.LoopId;
  const loops: ExpressionRef[] = [];
  const bulk: ["MemoryFill" | "MemoryCopy" | "MemoryInit", ExpressionRef][] = [];
  const stack: ExpressionRef[] = [root];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (e === 0) continue;
    const id = b.getExpressionId(e);
    const children = table.get(id);
    if (children === undefined) {
      const kind = kindNames?.get(id) ?? `#${id}`;
      throw new ReachError(
        "PACK_MALFORMED",
        `fuel metering: function "${funcName}" uses an instruction fuel metering does not support (${kind}); ` +
          "build the tool without it (for example without table.fill/copy/init, GC allocation, try_table, strings or stack switching)",
        { details: { reason: "unsupported-instruction", kind, function: funcName } },
      );
    }
    if (id === loopId) loops.push(e);
    const bulkKind = bulkIds.get(id);
    if (bulkKind !== undefined) bulk.push([bulkKind, e]);
    children(b, e, stack);
  }
  return { loops, bulk };
}
