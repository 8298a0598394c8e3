#include "lang/ast.hpp"

namespace tack::ast {

const char* spelling(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::FloorDiv:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::Pow:
      return "**";
    case BinOp::MatMul:
      return "@";
    case BinOp::Shl:
      return "<<";
    case BinOp::Shr:
      return ">>";
    case BinOp::BitAnd:
      return "&";
    case BinOp::BitOr:
      return "|";
    case BinOp::BitXor:
      return "^";
  }
  return "?";
}

const char* spelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "-";
    case UnaryOp::Pos:
      return "+";
    case UnaryOp::Invert:
      return "~";
    case UnaryOp::Not:
      return "not";
  }
  return "?";
}

const char* spelling(CmpOp op) {
  switch (op) {
    case CmpOp::Lt:
      return "<";
    case CmpOp::Le:
      return "<=";
    case CmpOp::Gt:
      return ">";
    case CmpOp::Ge:
      return ">=";
    case CmpOp::Eq:
      return "==";
    case CmpOp::Ne:
      return "!=";
  }
  return "?";
}

}  // namespace tack::ast
