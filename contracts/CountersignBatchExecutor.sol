// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.37;

/// @title CountersignBatchExecutor
/// @notice The delegate of countersign's gas station. A user's EOA points its code at this contract
/// (EIP-7702); anyone (in practice the service's sponsor key) may then call `execute` on the user's
/// address with a batch the user signed as EIP-712. The sponsor pays the gas; the calls run with the
/// user's address as `msg.sender`.
/// @dev No owner, no constructor arguments, no immutables: the CREATE2 address depends on the code alone.
/// Under EIP-7702 `address(this)` is the delegating account, so the signature must recover to it; called
/// directly, `address(this)` is this contract, whose key nobody has, so every batch is refused.
contract CountersignBatchExecutor {
    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    /// @custom:storage-location erc7201:countersign.batch-executor
    struct ExecutorStorage {
        uint256 nextNonce;
    }

    event BatchExecuted(uint256 indexed nonce, uint256 calls);

    error InvalidBatchSize(uint256 length);
    error DeadlineExpired(uint256 deadline);
    error NonceAlreadyUsed(uint256 nonce, uint256 nextNonce);
    error InvalidSignature();
    error CallFailed(uint256 index, bytes reason);

    uint256 private constant MAX_CALLS = 50;

    // ERC-7201: keccak256(abi.encode(uint256(keccak256("countersign.batch-executor")) - 1)) & ~bytes32(uint256(0xff)).
    // A namespaced slot, so state an earlier delegate left in the account never aliases the nonce.
    bytes32 private constant STORAGE_SLOT = 0x6835220c8fe08283059256a0f06f656cb87cfd2e39a7de88bee3508b58724f00;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("CountersignBatchExecutor");
    bytes32 private constant VERSION_HASH = keccak256("1");
    bytes32 private constant CALL_TYPEHASH = keccak256("Call(address to,uint256 value,bytes data)");
    bytes32 private constant BATCH_TYPEHASH =
        keccak256(
            "BatchExecution(Call[] calls,uint256 nonce,uint256 deadline)Call(address to,uint256 value,bytes data)"
        );

    // secp256k1n / 2: signatures with a larger s are the malleable twin of a low-s one (EIP-2).
    uint256 private constant HALF_CURVE_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// @notice Runs `calls` from this account if the account's key signed them with this nonce and deadline.
    /// @dev Nonces are monotonic with gaps allowed: a nonce at or above `nextNonce` is accepted once and moves
    /// `nextNonce` past it, so a batch that reverted consumed nothing and later-signed batches still run.
    function execute(
        Call[] calldata calls,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external payable {
        uint256 count = calls.length;
        if (count == 0 || count > MAX_CALLS) revert InvalidBatchSize(count);
        if (block.timestamp > deadline) revert DeadlineExpired(deadline);
        ExecutorStorage storage $ = _store();
        uint256 expected = $.nextNonce;
        if (nonce < expected) revert NonceAlreadyUsed(nonce, expected);
        if (!_signedByThisAccount(_digest(calls, nonce, deadline), signature)) revert InvalidSignature();

        // Checks-effects-interactions: the nonce moves before any call, so a call cannot replay this batch.
        // nonce == type(uint256).max cannot be used: the checked increment panics and the batch reverts.
        $.nextNonce = nonce + 1;

        for (uint256 i = 0; i < count; ++i) {
            Call calldata c = calls[i];
            (bool ok, bytes memory reason) = c.to.call{value: c.value}(c.data);
            // Reverting the whole batch also undoes the nonce bump: a failed batch can be signed again.
            if (!ok) revert CallFailed(i, reason);
        }
        emit BatchExecuted(nonce, count);
    }

    /// @notice The lowest gas-station nonce this account still accepts.
    function nextNonce() external view returns (uint256) {
        return _store().nextNonce;
    }

    /// @notice A delegated EOA keeps accepting plain ETH transfers.
    receive() external payable {}

    /// @notice ERC-721 safe transfers to a delegated EOA keep working as they do for a plain EOA.
    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC721Received.selector;
    }

    /// @notice ERC-1155 safe transfers to a delegated EOA keep working as they do for a plain EOA.
    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155Received.selector;
    }

    /// @notice ERC-1155 batch safe transfers to a delegated EOA keep working as they do for a plain EOA.
    function onERC1155BatchReceived(
        address,
        address,
        uint256[] calldata,
        uint256[] calldata,
        bytes calldata
    ) external pure returns (bytes4) {
        return this.onERC1155BatchReceived.selector;
    }

    /// @notice ERC-165: this account implements ERC-165 and the ERC-721 and ERC-1155 receiver interfaces.
    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return
            interfaceId == 0x01ffc9a7 || // ERC-165
            interfaceId == 0x150b7a02 || // IERC721Receiver
            interfaceId == 0x4e2312e0; // IERC1155Receiver (both hooks)
    }

    function _store() private pure returns (ExecutorStorage storage $) {
        assembly {
            $.slot := STORAGE_SLOT
        }
    }

    /// @dev The EIP-712 digest: "\x19\x01" ‖ domainSeparator ‖ hashStruct(BatchExecution).
    function _digest(Call[] calldata calls, uint256 nonce, uint256 deadline) private view returns (bytes32) {
        // An array of structs is encoded as keccak256 of its elements' hashStruct values, concatenated.
        bytes32[] memory callHashes = new bytes32[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            Call calldata c = calls[i];
            callHashes[i] = keccak256(abi.encode(CALL_TYPEHASH, c.to, c.value, keccak256(c.data)));
        }
        bytes32 structHash = keccak256(
            abi.encode(BATCH_TYPEHASH, keccak256(abi.encodePacked(callHashes)), nonce, deadline)
        );
        bytes32 domainSeparator = keccak256(
            abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this))
        );
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator, structHash));
    }

    /// @dev Exactly 65 bytes r ‖ s ‖ v; v is 27/28 (0/1 accepted); s in the lower half; signer is this account.
    function _signedByThisAccount(bytes32 digest, bytes calldata signature) private view returns (bool) {
        if (signature.length != 65) return false;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (v != 27 && v != 28) return false;
        if (uint256(s) > HALF_CURVE_ORDER) return false;
        address signer = ecrecover(digest, v, r, s);
        return signer != address(0) && signer == address(this);
    }
}
