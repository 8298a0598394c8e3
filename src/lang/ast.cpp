#include "lang/ast.hpp"

namespace tack::ast {

Expr::~Expr() {
  // Children are moved to a worklist before they are destroyed, so each destructor call finds
  // its node already childless and returns without recursing.
  std::vector<ExprPtr> pending;
  auto detach = [&pending](Expr& e) {
    if (e.operand) pending.push_back(std::move(e.operand));
    for (ExprPtr& a : e.args)
      if (a) pending.push_back(std::move(a));
    for (Keyword& k : e.keywords)
      if (k.value) pending.push_back(std::move(k.value));
  };
  detach(*this);
  while (!pending.empty()) {
    ExprPtr e = std::move(pending.back());
    pending.pop_back();
    detach(*e);
  }
}

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
